"""Differential tests (issue 11): the same experiment (course_lib.experiments.behaviour_probes) on the simulator and
on real Kafka 4.3.1 through kafka-python 3.0.12, both through the Backend protocol, must give
the same observable outcome - what was acknowledged, what a consumer could read, which error
the application saw.

Every experiment kills or pauses brokers; the cluster is revived after each one. All of them run
on the session's LocalCluster (conftest.py): its KRaft controller is a process of its own, so ELR
and the unclean election, which kill two brokers, still have a controller.
"""

import warnings

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from course_lib.experiments import behaviour_probes as probes
from course_lib.experiments import by_design
from course_lib.backend import ComposedBackend, SimBackend
from course_lib.broker import Cluster
from course_lib.clients import KafkaProducer as SimProducer
from course_lib.experiments import differential
from course_lib.experiments.sequence_clusters import VirtualClock
from course_lib.real.broker_metadata import wait_for_new_leader

pytestmark = pytest.mark.real_kafka


@pytest.fixture
def both(cluster):
    """``run(experiment)`` -> (simulator's outcome, real Kafka's outcome); revives the cluster."""
    backends = []

    def run(experiment):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sim = experiment(SimBackend.start(seed=1, **probes.SIM_TIMING)).numbers
            real_backend = ComposedBackend(cluster)
            backends.append(real_backend)
            real = experiment(real_backend).numbers
        return sim, real

    yield run
    for b in backends:
        b.close_clients()
    cluster.revive()
    for topic in ("__consumer_offsets", "__transaction_state"):
        try:
            cluster.partition_info(topic)
        except Exception:  # the internal topic was never created: nothing to wait for (wait_until
            continue  # retries a failing read until its bound - a minute per test, measured)
        ComposedBackend(cluster).wait_until(lambda t=topic: len(cluster.isr_of(t)) == 3, timeout_ms=60_000)


def test_strict_min_isr_high_watermark(both):
    sim, real = both(probes.strict_min_isr_high_watermark)
    assert real == sim == {"acknowledged": 5, "read": 0, "isr": 2}


#: how kafka-python fails a batch whose delivery timeout runs out while NOT_ENOUGH_REPLICAS is
#: retried: expired in the accumulator (KafkaTimeoutError), or failed with the error of an answer
#: that comes after the deadline (Sender._can_retry) - which comes first is the machine's timing
EXPIRED_WHILE_RETRIED = {"KafkaTimeoutError", "NotEnoughReplicasError"}


def test_kafka_python_commits_a_transaction_whose_send_failed(both):
    sim, real = both(probes.transaction_with_a_failed_send)
    assert sim["y"] in EXPIRED_WHILE_RETRIED and real["y"] in EXPIRED_WHILE_RETRIED, (sim, real)
    same = {"x": "ok", "commit": "ok", "read_committed_a": [b"x"], "read_committed_b": []}
    assert {k: v for k, v in real.items() if k != "y"} == {k: v for k, v in sim.items() if k != "y"} == same


def test_after_an_expired_idempotent_batch_kafka_python_never_sends_the_next_one(both):
    """kafka-python 3.0.12 resets its producer id after the expired batch and never asks for a
    new one (a bug since 3.0.0): the next batch stays unsent and unexpired. If this fails because
    real Kafka now says "ok", kafka-python fixed it: model the fix in the simulator."""
    sim, real = both(probes.idempotent_batch_expired)
    kafka_python = {
        "first": "KafkaTimeoutError",
        "second_after_10s": "pending",
        "close(timeout=0)": "KafkaTimeoutError",
    }
    # An expired batch is indeterminate, and Kafka allows both: the probe waits until the metadata
    # shows the ISR shrunk to 2 (the controller fences the crashed follower), but the leader learns
    # it from the metadata log too and may still hold an ISR of 3 when the first batch comes - on a
    # loaded machine it did (read: [b"first"]). It then appends the batch, answers
    # NotEnoughReplicasAfterAppend once it shrinks, the retries are refused and the batch expires:
    # in the log, and read once the ISR is back. The simulator's leader never lags its controller.
    assert real.pop("read") in ([], [b"first"]), "the second batch must never be sent"
    assert sim.pop("read") == []
    assert real == sim == kafka_python


def test_close_with_a_record_unfinished_raises_and_the_producer_goes_on(both):
    """kafka-python 3.0.12's close(timeout=0) flushes first: with a record waiting for the ISR it
    raises KafkaTimeoutError and stops nothing, so the next send and the first are both delivered
    once the ISR is back (measured 9.5 s on Kafka 4.3.1)."""
    sim, real = both(probes.close_with_a_record_unfinished)
    assert (
        real
        == sim
        == {"close(timeout=0)": "KafkaTimeoutError", "first": "ok", "second": "ok", "read": [b"first", b"second"]}
    )


def test_zombie_send_and_commit(both):
    sim, real = both(probes.zombie_transactional_send)
    assert real == sim == {"late": "InvalidProducerEpochError", "commit": "KafkaError", "read_committed": []}


def test_a_java_consumer_whose_known_brokers_died_rebootstraps_on_kafka_too(cluster):
    """course_lib.experiments.by_design's rebootstrap observation with Java on Kafka 4.3.1: it goes back to
    bootstrap.servers and reads from the new leader, as on the simulated cluster. (Measured once
    with every client, 30-38 s each: kafka-python waits, librdkafka rebootstraps, as on the wire;
    make test runs Java only, and the other by-design observations on the wire only: cost.)"""
    (obs,) = [o for o in by_design.OBSERVATIONS if o.probe == "consumer_whose_known_brokers_died"]
    result, why, _ = by_design.on_cluster(obs, "java", cluster)
    assert why is None, why
    assert result is not None and obs.outcome(result.numbers) == obs.expected["java"], result


@pytest.fixture
def separate(cluster):
    """The session cluster, whose KRaft controller survives two dead brokers (ELR and unclean
    elections need that): no second cluster to start (it cost a cluster start per run)."""
    return cluster


def _differential(cluster, experiment):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = experiment(SimBackend.start(seed=1, **probes.SIM_TIMING)).numbers
        real_backend = ComposedBackend(cluster)
        try:
            real = experiment(real_backend).numbers
        finally:
            real_backend.close_clients()
            cluster.revive()
    return sim, real


def test_elr_clean_election(separate):
    sim, real = _differential(separate, probes.elr_clean_election)
    assert real == sim == {"acknowledged": 3, "new_leader_is_the_paused_follower": True, "read": 3}


def test_acks0_to_a_deposed_leader_loses_only_the_election_window(both):
    sim, real = both(probes.acks0_to_a_deposed_leader)
    assert real == sim == {"last_10_kept": True}


def test_a_consumer_that_knows_only_the_dead_leader_waits_for_it_then_seeks_to_the_divergence_point(separate):
    """kafka-python 3.0.12 implements KIP-320, but the consumer that started while the old leader
    was the only live broker knows no other broker (no rebootstrap): it reads nothing until that
    broker returns, then reads new0..new5 from offset 3, the divergence point."""
    sim, real = _differential(separate, probes.consumer_after_unclean_election)
    assert (
        real
        == sim
        == {
            "read_before": 6,
            "read_while_its_only_broker_is_down": [],
            "read_after_it_is_back": [(3 + i, f"new{i}".encode()) for i in range(6)],
        }
    )


# ---- what the client differential's new observables found, on Kafka 4.3.1 --------------------------
# (course_lib/experiments/differential.py lists both; these show they are kafka-python's, not the wire's)
class _LocalClock:
    """The call-sequence contract's cluster side (course_lib.client_adapters.call_sequences) on the
    LocalCluster: the differential's faults by the same roles (the topic's leader). Its state is
    Kafka's, not the simulator's: nothing here is waited on (these sequences hold no transaction
    whose markers to wait for)."""

    name = "the LocalCluster"

    def __init__(self, cluster, topic):
        self.cluster, self.topic = cluster, topic

    def read(self, fn):
        return fn(self.cluster)

    def wait_until(self, condition, timeout_s):
        return True

    def fault(self, name, broker):
        """The leader crashes; this returns once every live broker names the same new leader and
        that leader serves the partition (:func:`~course_lib.real.broker_metadata.wait_for_new_leader`)."""
        assert name == "crash", name
        self.cluster.crash(broker)
        self.cluster.wait_for_leader(self.topic, not_in=(broker,))
        wait_for_new_leader(self.cluster.live_bootstrap_servers().split(","), self.topic, broker, timeout_s=60)

    def heal(self):
        self.cluster.revive()
        return True

    def poll_until(self, poll, done):
        raise NotImplementedError("no group sequence runs on the LocalCluster here")


def _sequence(client, producer, cluster, topic, calls, config, wait_s=5):
    config = {**config, "linger_ms": 0}  # every call waits for the sends before it
    _, futures = differential.producer_sequence(client, producer, cluster, topic, calls, config, wait_s)
    return [differential.future_outcome(f) for f in futures]


def _sim_sequence(config_name, calls):
    sim = Cluster(3, seed=1, **differential.FAULT_OPTIONS)
    sim.create_topic("t", min_insync_replicas=2)
    config = differential.ProducerDifferential.config(0, config_name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        producer = SimProducer(bootstrap_servers=sim, **config)
    return _sequence("simulator", producer, VirtualClock(sim), "t", calls, config)


def _kafka_sequence(cluster, config_name, calls, name):
    topic = cluster.create_topic(name, partitions=1, replication_factor=3, min_insync_replicas=2)
    config = differential.ProducerDifferential.config(0, config_name)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, **{**config, "max_block_ms": 60_000})
    try:
        # Kafka elects after its session timeout: a send waits for it
        return _sequence("kafka-python", producer, _LocalClock(cluster, topic), topic, calls, config, wait_s=60)
    finally:
        differential._stop_sender(producer)


def test_with_retries_0_kafka_python_waits_out_a_crashed_leader_where_the_simulator_fails(cluster):
    """kafka-python sends a batch only over a connection it has: after the leader is killed its
    retries=0 records wait for the new leader and are written. The simulator, without a connect
    step, spends the only attempt on the dead leader (listed in KNOWN_PRODUCER_SEQUENCES)."""
    calls = ("send", "crash_leader", "send", "send")
    real = _kafka_sequence(cluster, "retries=0", calls, "diff-retries0-crash")
    sim = _sim_sequence("retries=0", calls)
    assert real == ["ok offset 0", "ok offset 1", "ok offset 2"]
    assert sim[0] == "ok offset 0" and sim[1] == "KafkaConnectionError"


def test_kafka_python_reports_an_acks0_records_index_in_its_batch_as_its_offset(cluster):
    """acks=0 on Kafka 4.3.1: kafka-python's futures say offsets 0, 1 for records written at 2 and
    3 (its synthesized answer has base offset 0); the simulator says -1, as Java does."""
    topic = cluster.create_topic("diff-acks0-offsets", partitions=1, replication_factor=3, min_insync_replicas=2)
    first = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
    for value in (b"a", b"b"):
        first.send(topic, value).get(timeout=30)
    first.close()
    acks0 = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks=0, enable_idempotence=False, linger_ms=200)
    futures = [acks0.send(topic, value) for value in (b"c", b"d")]  # one batch: the linger holds both
    acks0.flush()
    acks0.close()
    consumer = KafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers, auto_offset_reset="earliest", consumer_timeout_ms=10_000
    )
    try:
        consumer.assign([TopicPartition(topic, 0)])
        written = {r.value: r.offset for r in consumer if r.value in (b"c", b"d") or len(r.value) == 1}
    finally:
        consumer.close()
    assert [f.get(timeout=10).offset for f in futures] == [0, 1]
    assert written == {b"a": 0, b"b": 1, b"c": 2, b"d": 3}
    assert _sim_sequence("acks=0", ("send", "send"))[:2] == ["ok offset -1", "ok offset -1"]
