"""The simulated KafkaProducer: kafka-python's names, defaults, errors and retry behaviour."""

import warnings

import pytest
from kafka import errors as Errors

from course_lib.clients import ConfigurationError, IdempotenceDisabledWarning, KafkaProducer
from course_lib.clients.config import resolve_producer_config

TOPIC = "t"  # the topic the `cluster` fixture in conftest.py creates


# ---- configuration --------------------------------------------------------------------------
def test_defaults_are_kafka_python_3s():
    c = resolve_producer_config()
    assert (c["acks"], c["enable_idempotence"], c["retries"]) == (-1, True, float("inf"))
    assert (c["delivery_timeout_ms"], c["max_in_flight_requests_per_connection"]) == (120000, 5)


def test_unknown_keys_get_a_suggestion():
    with pytest.raises(ConfigurationError, match="did you mean 'enable_idempotence'"):
        resolve_producer_config(enable_idempotency=True)
    with pytest.raises(ValueError):  # also a ValueError, as kafka-python raises for unknown keys
        resolve_producer_config(acks_mode=1)


@pytest.mark.parametrize(
    "key,value,match",
    [
        ("acks", 2, "acks must be 0, 1 or 'all'"),
        ("acks", True, "acks must be"),
        ("retries", -1, "retries must be"),
        ("request_timeout_ms", -5, "request_timeout_ms must be"),
        ("delivery_timeout_ms", 0, "delivery_timeout_ms must be"),
        ("max_in_flight_requests_per_connection", 0, "positive integer"),
        ("enable_idempotence", "yes", "True or False"),
        ("transactional_id", "", "non-empty string"),
    ],
)
def test_bad_values_name_the_key_and_the_allowed_values(key, value, match):
    with pytest.raises(ConfigurationError, match=match):
        resolve_producer_config(**{key: value})


def test_delivery_timeout_must_cover_one_request():
    with pytest.raises(ConfigurationError, match="linger_ms \\+ request_timeout_ms"):
        resolve_producer_config(delivery_timeout_ms=1000, request_timeout_ms=2000)


def test_explicit_idempotence_with_conflicting_settings_is_an_error():
    with pytest.raises(ConfigurationError, match="acks='all'"):
        resolve_producer_config(enable_idempotence=True, acks=0)
    with pytest.raises(ConfigurationError, match="retries=0"):
        resolve_producer_config(enable_idempotence=True, retries=0)
    with pytest.raises(ConfigurationError):
        resolve_producer_config(transactional_id="t", max_in_flight_requests_per_connection=6)


def test_default_idempotence_is_switched_off_with_a_warning_like_kafka_python():
    with pytest.warns(IdempotenceDisabledWarning, match="acks=1"):
        c = resolve_producer_config(acks=1)
    assert c["enable_idempotence"] is False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert resolve_producer_config(acks=1, enable_idempotence=False)["enable_idempotence"] is False


def test_the_simulator_needs_a_cluster_and_says_how_to_reach_real_kafka():
    with pytest.raises(ConfigurationError, match="from kafka import KafkaProducer"):
        KafkaProducer(bootstrap_servers="localhost:9092")


# ---- sending ----------------------------------------------------------------------------------
def test_send_returns_futures_with_callbacks(make_producer):
    producer = make_producer()
    seen = []
    future = producer.send(TOPIC, b"a").add_callback(lambda md: seen.append(md.offset))
    errors = []
    future.add_errback(errors.append)
    producer.flush()
    assert future.succeeded() and seen == [0] and errors == []
    md = future.get()
    assert (md.topic, md.partition, md.offset) == (TOPIC, 0, 0)


def test_bad_send_arguments(make_producer, cluster):
    producer = make_producer()
    with pytest.raises(TypeError, match="value_serializer"):
        producer.send(TOPIC, "not bytes")
    with pytest.raises(ValueError, match="value or a key"):
        producer.send(TOPIC)
    with pytest.raises(Errors.UnknownTopicOrPartitionError, match="create_topic"):
        producer.send("missing", b"x")
    with pytest.raises(ValueError, match="not a partition"):
        producer.send(TOPIC, b"x", partition=3)
    producer.close()
    with pytest.raises(Errors.IllegalStateError, match="closed"):
        producer.send(TOPIC, b"x")


def test_serializers_and_keyed_partitioning_match_kafka_python(cluster):
    cluster.create_topic("keyed", partitions=3)
    from kafka.partitioner.default import murmur2

    producer = KafkaProducer(bootstrap_servers=cluster, value_serializer=str.encode, key_serializer=str.encode)
    md = producer.send("keyed", "hello", key="account-7").get()
    assert md.partition == (murmur2(b"account-7") & 0x7FFFFFFF) % 3


def test_records_sent_together_share_a_batch(make_producer, cluster):
    producer = make_producer()
    for i in range(10):
        producer.send(TOPIC, b"x%d" % i)
    producer.flush()
    log = cluster.brokers[1].partitions[(TOPIC, 0)].log
    assert len(log.batches) == 1 and log.leo == 10
    small = make_producer(batch_size=1)
    for i in range(3):
        small.send(TOPIC, b"y%d" % i)
    small.flush()
    assert len(log.batches) == 4


def test_acks_0_succeeds_at_once_with_offset_minus_one(make_producer):
    producer = make_producer(acks=0, enable_idempotence=False)
    md = producer.send(TOPIC, b"a").get()
    assert md.offset == -1


def test_retries_0_turns_a_transient_error_into_a_failure(make_producer, cluster):
    producer = make_producer(
        acks=1, enable_idempotence=False, retries=0, request_timeout_ms=500, delivery_timeout_ms=1000
    )
    cluster.lose_next_request(producer.node_id)
    with pytest.raises(Errors.RequestTimedOutError):
        producer.send(TOPIC, b"a").get()
    outcome = [op for op in cluster.history if op.f == "send" and op.type != "invoke"][0]
    assert outcome.type == "info"  # a timed-out request may have been appended: nobody knows


def test_retries_recover_the_same_transient_error(make_producer, cluster):
    producer = make_producer(request_timeout_ms=500, delivery_timeout_ms=5000)
    cluster.lose_next_request(producer.node_id)
    assert producer.send(TOPIC, b"a").get().offset == 0


def test_delivery_timeout_bounds_the_whole_attempt(make_producer, cluster):
    producer = make_producer(request_timeout_ms=1000, delivery_timeout_ms=3000)
    cluster.crash(2)
    cluster.crash(3)
    cluster.run_for(4000)  # ISR = [1] < min.insync.replicas=2
    start = cluster.now
    future = producer.send(TOPIC, b"a")
    with pytest.raises(Errors.KafkaTimeoutError, match="NotEnoughReplicasError"):
        future.get()
    assert 3000 <= cluster.now - start < 3500
    failed = [op for op in cluster.history if op.f == "send" and op.type == "fail"]
    assert failed and failed[0].error == "KafkaTimeoutError"  # definitely not written


def test_not_leader_triggers_a_metadata_refresh_and_retry(make_producer, cluster):
    producer = make_producer()
    producer.send(TOPIC, b"a").get()
    cluster.crash(1)
    md = producer.send(TOPIC, b"b").get()
    assert cluster.leader_of(TOPIC) == 2 and md.offset == 1


def test_the_idempotent_producer_numbers_batches_per_partition(make_producer):
    producer = make_producer()
    producer.send(TOPIC, b"a").get()
    producer.send(TOPIC, b"b").get()
    state = producer.state
    assert state["producer_id"] >= 0 and state["producer_epoch"] == 0
    assert state["next_sequence"] == {f"{TOPIC}-0": 2}


def test_a_restarted_producer_gets_a_new_producer_id(make_producer):
    first = make_producer()
    first.send(TOPIC, b"a").get()
    second = make_producer()
    second.send(TOPIC, b"b").get()
    assert first.producer_id != second.producer_id


def test_history_records_every_send(make_producer, cluster):
    producer = make_producer()
    producer.send(TOPIC, b"a").get()
    types = [(op.type, op.value) for op in cluster.history if op.f == "send"]
    assert types == [("invoke", "a"), ("ok", "a")]
    ok = [op for op in cluster.history if op.type == "ok"][0]
    assert ok.evidence["leader"] == 1 and ok.offset == 0
