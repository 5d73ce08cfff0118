"""DeleteTopics over the wire, and the admin differential: the same seeded sequences of
create/delete/list calls through kafka-python 3.0.12's KafkaAdminClient (on a wire cluster) and
through the simulator's KafkaAdminClient (on a simulated Cluster), comparing return values and
exception classes - deleting a topic that is not there included."""

import os
import random
import warnings

import pytest
from kafka import KafkaAdminClient as RealAdmin
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka import errors as Errors
from kafka.protocol.admin import DeleteTopicsRequest, DeleteTopicsResponse

from course_lib.broker import Cluster
from course_lib.clients import KafkaAdminClient as SimAdmin
from course_lib.wire import WireCluster, apis

from .client_probes import RawClient


@pytest.fixture
def wire(no_leaks):
    """The module's wire cluster without topic auto-creation: these tests are about deletion, and
    with Kafka's default (auto.create.topics.enable=true, tests/wire/test_broker_configs.py) a
    client asking for the deleted topic's metadata would create it again at once - as on Kafka."""
    w = WireCluster(
        brokers=3, seed=1, config={"auto.create.topics.enable": "false"}, group_initial_rebalance_delay_ms=0
    )
    w.start()
    try:
        yield w
    finally:
        w.stop()


SEQUENCES = int(os.environ.get("WIRE_ADMIN_DIFF_SEQUENCES", "40"))
NAMES = ("a", "b", "c")


def test_delete_topics_is_advertised_at_v1_to_v5_and_kafka_python_speaks_v5(wire):
    assert apis.SUPPORTED[DeleteTopicsRequest.API_KEY][:2] == (1, 5)  # v6: topic ids, not given out
    wire.create_topic("orders")
    raw = RawClient(wire.bootstrap_servers)
    try:
        frame = raw.request(DeleteTopicsRequest(topic_names=["orders", "nope"], timeout_ms=5000), 5)
    finally:
        raw.close()
    resp = DeleteTopicsResponse.decode(frame, version=5, header=True)
    assert [(r.name, r.error_code, r.error_message) for r in resp.responses] == [
        ("orders", 0, None),
        ("nope", Errors.UnknownTopicOrPartitionError.errno, "This server does not host this topic-partition."),
    ]
    # answered once the answering broker has applied it: its metadata no longer has the topic
    assert wire.call(lambda: "orders" not in wire.cluster.controller.configs)
    admin = RealAdmin(bootstrap_servers=wire.bootstrap_servers)
    try:
        assert "orders" not in admin.list_topics()
        with pytest.raises(Errors.UnknownTopicOrPartitionError):
            admin.delete_topics(["orders"])
    finally:
        admin.close()


def test_clients_of_a_deleted_topic_get_kafkas_errors_and_a_new_topic_starts_at_0(wire):
    wire.create_topic("orders", min_insync_replicas=2)
    producer = KafkaProducer(
        bootstrap_servers=wire.bootstrap_servers,
        acks="all",
        enable_idempotence=False,
        request_timeout_ms=1000,
        delivery_timeout_ms=2000,
        max_block_ms=2000,
    )
    consumer = KafkaConsumer(bootstrap_servers=wire.bootstrap_servers, auto_offset_reset="earliest")
    try:
        for i in range(3):
            producer.send("orders", b"old-%d" % i).get(timeout=10)
        wire.delete_topic("orders")
        # a batch for the deleted partition expires; a send that needs its metadata waits for it in vain
        with pytest.raises(Errors.KafkaTimeoutError, match="Expiring"):
            producer.send("orders", b"lost", partition=0).get(timeout=10)
        with pytest.raises(Errors.KafkaTimeoutError, match="Failed to update metadata"):
            producer.send("orders", b"lost")
        wire.create_topic("orders", min_insync_replicas=2)
        assert producer.send("orders", b"new-0").get(timeout=10).offset == 0
        tp = TopicPartition("orders", 0)
        consumer.assign([tp])
        got = []
        for _ in range(50):
            got += [r.value for rs in consumer.poll(200).values() for r in rs]
            if got:
                break
        assert got == [b"new-0"]
    finally:
        producer.close(timeout=5)
        consumer.close()


def subscribed_member(create, delete, producer, consumer) -> list:
    """A group member subscribed to a topic that is deleted and created again: what it reads, its
    assignment and its committed offset at each step."""
    out = []
    create()
    p = producer()
    for i in range(3):
        p.send("t", b"old%d" % i).get(timeout=10)
    c = consumer()
    got: list = []
    for _ in range(40):
        got += [r.value for rs in c.poll(timeout_ms=250).values() for r in rs]
        if len(got) >= 3:
            break
    c.commit()
    out += [("read", got), ("committed", c.committed(TopicPartition("t", 0)))]
    delete()
    out += [("poll after deletion", [c.poll(timeout_ms=250) for _ in range(8)]), ("assignment", c.assignment())]
    create()
    p.send("t", b"new").get(timeout=10)
    got = []
    for _ in range(60):
        got += [r.value for rs in c.poll(timeout_ms=250).values() for r in rs]
        if got:
            break
    out += [("after re-creation", got, c.assignment()), ("committed", c.committed(TopicPartition("t", 0)))]
    c.close()
    p.close()
    return out


def test_a_subscribed_member_of_a_deleted_topic_matches_kafka_python(wire):
    """kafka-python rejoins when the subscription's metadata changes: after the deletion its
    assignment is empty; after the re-creation it gets the new partition, whose committed offset
    went with the old topic, and reads it from the start."""
    from course_lib.clients import KafkaConsumer as SimConsumer
    from course_lib.clients import KafkaProducer as SimProducer

    group = {"group_id": "g", "auto_offset_reset": "earliest", "enable_auto_commit": False}
    cluster = Cluster(3, seed=1, group_initial_rebalance_delay_ms=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        simulated = subscribed_member(
            lambda: cluster.create_topic("t", min_insync_replicas=2),
            lambda: cluster.delete_topic("t"),
            lambda: SimProducer(bootstrap_servers=cluster, acks="all", enable_idempotence=False),
            lambda: SimConsumer("t", bootstrap_servers=cluster, **group),
        )
    over_the_wire = subscribed_member(
        lambda: wire.create_topic("t", min_insync_replicas=2),
        lambda: wire.delete_topic("t"),
        lambda: KafkaProducer(bootstrap_servers=wire.bootstrap_servers, acks="all", enable_idempotence=False),
        lambda: KafkaConsumer("t", bootstrap_servers=wire.bootstrap_servers, **group),
    )
    assert simulated == over_the_wire
    assert simulated[-2] == ("after re-creation", [b"new"], {TopicPartition("t", 0)})


def test_an_internal_topic_is_not_deleted(wire):
    wire.call(lambda: wire.cluster.controller.ensure_internal_topic("__consumer_offsets"))
    admin = RealAdmin(bootstrap_servers=wire.bootstrap_servers)
    try:
        with pytest.raises(Errors.InvalidRequestError):
            admin.delete_topics(["__consumer_offsets"])
    finally:
        admin.close()


def test_the_wire_backend_deletes_a_topic_it_created():
    from course_lib.backend import ComposedBackend

    with WireCluster.lab(seed=1) as lab:
        backend = ComposedBackend(lab)
        name = backend.create_topic("orders", partitions=2)
        backend.delete_topic(name)
        assert lab.call(lambda: "orders" not in lab.cluster.controller.configs)
        with pytest.raises(Errors.UnknownTopicOrPartitionError):
            backend.delete_topic(name)


# ---- the differential ---------------------------------------------------------------------------
def outcome(fn) -> tuple:
    try:
        return ("ok", normalized(fn()))
    except Exception as exc:  # noqa: BLE001 - the exception class is what is compared
        return ("raised", type(exc).__name__)


def normalized(result):
    if isinstance(result, dict):  # rows by name (Kafka does not promise an order)
        return {k: sorted(map(repr, v)) if isinstance(v, list) else v for k, v in result.items()}
    return sorted(result) if isinstance(result, list) else result


def admin_calls(seed: int) -> list:
    rng = random.Random(seed)
    calls = []
    for _ in range(rng.randint(4, 10)):
        kind = rng.choice(["create", "create", "delete", "delete", "delete_many", "list"])
        names = [rng.choice(NAMES) for _ in range(rng.randint(1, 3) if kind == "delete_many" else 1)]
        raise_errors = rng.random() < 0.7
        calls.append((kind, names, raise_errors, rng.choice([1, 2])))
    return calls


def run(admin, calls, prefix: str) -> list:
    out = []
    for kind, names, raise_errors, partitions in calls:
        topics = [f"{prefix}{n}" for n in names]
        if kind == "create":
            spec = {topics[0]: {"num_partitions": partitions, "replication_factor": 3}}
            out.append(outcome(lambda: admin.create_topics(spec, raise_errors=raise_errors)))
        elif kind == "list":
            out.append(outcome(lambda: [t for t in admin.list_topics() if t.startswith(prefix)]))
        else:
            out.append(outcome(lambda: admin.delete_topics(topics, raise_errors=raise_errors)))
    return out


@pytest.fixture(scope="module")
def shared_wire():
    with WireCluster(brokers=3, seed=1) as wire:
        yield wire


def test_admin_call_sequences_match_kafka_python(shared_wire, no_leaks):
    real = RealAdmin(bootstrap_servers=shared_wire.bootstrap_servers)
    try:
        for seed in range(SEQUENCES):
            calls = admin_calls(seed)
            prefix = f"s{seed}-"  # the shared wire cluster keeps earlier sequences' topics apart
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                simulated = run(SimAdmin(bootstrap_servers=Cluster(3, seed=seed)), calls, prefix)
            over_the_wire = run(real, calls, prefix)
            for i, (call, sim, kp) in enumerate(zip(calls, simulated, over_the_wire)):
                assert sim == kp, (
                    f"seed {seed}, call {i} {call}: simulator {sim} != kafka-python {kp} (replay: admin_calls({seed}))"
                )
    finally:
        real.close()
