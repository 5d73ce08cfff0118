"""The simulator's seeded fault schedules (course_lib.nemesis) on the wire cluster: the same draws
as on the simulator, applied on the simulation thread at wall-clock ms, hitting kafka-python's
own connections. ``random_faults`` runs with kafka-python on the wire cluster and is checked as on the simulator:
no anomaly beyond what the configuration allows. Failures print the seed and the schedule."""

import random
import warnings

import pytest
from kafka import KafkaProducer
from kafka.protocol.producer import ProduceRequest, ProduceResponse
from kafka.record.memory_records import MemoryRecordsBuilder

from course_lib.nemesis import Fault, FaultKind
from course_lib.experiments.scenarios import run_scenario
from course_lib.backend import ComposedBackend
from course_lib.wire.cluster import WireCluster

from .client_probes import RawClient
from .conftest import wire_threads

SAFE_PRODUCER = {"acks": "all", "enable_idempotence": True}
SAFE_TOPIC = {"replication_factor": 3, "min_insync_replicas": 2, "unclean_leader_election_enable": False}


def describe(r) -> str:
    return f"seed={r.seed}: {r.result.summary()}\nschedule: " + "; ".join(map(str, r.notes["schedule"]))


@pytest.fixture(scope="module")
def lab():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with WireCluster.lab(seed=1) as lab:
            yield lab
    assert not wire_threads()


def _run(lab, seed, **params):
    backend = ComposedBackend(lab)
    try:
        return run_scenario("random_faults", backend=backend, seed=seed, **params)
    finally:
        backend.close_clients()
        lab.revive()


@pytest.mark.parametrize("seed", [1, 2, 5])
def test_random_faults_over_the_wire_keeps_every_acknowledged_record(lab, seed):
    r = _run(lab, seed, producer_config=SAFE_PRODUCER, topic_config=SAFE_TOPIC)
    simulated = run_scenario("random_faults", seed=seed, producer_config=SAFE_PRODUCER, topic_config=SAFE_TOPIC)
    assert r.notes["schedule"] == simulated.notes["schedule"], "the same seed draws the same schedule"
    assert r.result.final_read, describe(r)
    assert r.result.found == set(), describe(r)
    assert all(m.outcome is not None for m in r.result.messages.values()), describe(r)
    # every fault that started is in the run's history (lost ACKs and requests: the producer's)
    nemesis = [op for op in r.history if op.process == "nemesis"]
    assert nemesis, describe(r)
    assert all(op.value["client"] == "producer-1" for op in nemesis if op.f.startswith("lose_next")), describe(r)


def test_an_unsafe_configuration_over_the_wire_shows_only_what_it_allows(lab):
    r = _run(lab, 2, producer_config={"acks": 1, "enable_idempotence": False}, topic_config={"min_insync_replicas": 1})
    assert r.result.final_read, describe(r)
    assert r.result.valid, describe(r)  # anomalies, if any, are the ones acks=1 allows


def _start(wire, schedule, topic, client_id):
    wire.nemesis.run_schedule(schedule, topic, client_id)


def test_a_scheduled_lost_ack_hits_that_producers_connection_only(lab):
    """A lost ACK for ``victim``: another producer's send goes through first, untouched; the
    victim's first answer is lost, its connection stalls until request_timeout_ms, and its retry
    (idempotence off) writes the record a second time."""
    wire = lab
    topic = lab.create_topic("lost-ack-mapping", min_insync_replicas=2)
    bystander = KafkaProducer(bootstrap_servers=wire.bootstrap_servers, client_id="bystander", acks="all")
    victim = KafkaProducer(
        bootstrap_servers=wire.bootstrap_servers,
        client_id="victim",
        acks="all",
        enable_idempotence=False,
        request_timeout_ms=1000,
        retry_backoff_ms=50,
    )
    try:
        for p in (bystander, victim):
            p.partitions_for(topic)
        _start(wire, [Fault(0.0, FaultKind.LOSE_NEXT_ACK)], topic, "victim")
        assert bystander.send(topic, b"other").get(timeout=10).offset == 0
        victim.send(topic, b"mine").get(timeout=20)
    finally:
        bystander.close()
        victim.close()
    values = [v for _, _, v in wire.call(lambda: wire.cluster.committed_records(topic))]
    assert values == [b"other", b"mine", b"mine"]


def _produce(raw, topic: str, value: bytes):
    """One acks=all Produce v9 of one record, as kafka-python would frame it."""
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 16)
    builder.append(timestamp=None, key=None, value=value)
    builder.close()
    Topic = ProduceRequest.TopicProduceData
    request = ProduceRequest(
        transactional_id=None,
        acks=-1,
        timeout_ms=10_000,
        topic_data=[Topic(name=topic, partition_data=[Topic.PartitionProduceData(index=0, records=builder.buffer())])],
    )
    return ProduceResponse.decode(raw.request(request, 9), version=9, header=True)


def test_a_crash_right_after_the_ack_lets_the_ack_reach_the_client(lab):
    """crash_leader_after_ack: the leader wrote the ACK, then died. The kernel still sends what
    a killed process wrote, then closes: the whole answer arrives before the end of the stream.
    (A raw client: kafka-python 3.0.12 drops an answer that it reads in the same recv loop as the
    close - kafka/net/transport.py _sock_recv - so whether it sees this ACK is a race of its own.)"""
    wire = lab
    topic = lab.create_topic("ack-then-crash", min_insync_replicas=2)
    leader = lab.leader_of(topic)
    raw = RawClient(f"127.0.0.1:{wire.ports[leader]}")
    try:
        _start(wire, [Fault(0.0, FaultKind.CRASH_LEADER_AFTER_ACK, duration_ms=60_000)], topic, None)
        answer = _produce(raw, topic, b"acked")
        assert not wire.call(lambda: wire.cluster.inspect_broker(leader).up)
        with pytest.raises(ConnectionError):
            raw.read_frame()  # then the connection ends
    finally:
        raw.close()
        wire.nemesis.cancel()
        lab.revive()
    (partition,) = answer.responses[0].partition_responses
    assert (partition.error_code, partition.base_offset) == (0, 0)
    # the new leader's high watermark reaches it once a follower fetched after the election
    assert wire.wait_until(lambda: [v for _, _, v in wire.cluster.committed_records(topic)] == [b"acked"], 20)


def test_the_cli_schedule_is_the_simulators_schedule(lab):
    from course_lib.nemesis import NEEDS_TOPIC, random_schedule
    from course_lib.wire.__main__ import run_command

    out = run_command(lab, ["schedule", "6", "4"])
    lab.nemesis.cancel()
    lab.revive()
    kinds = tuple(k for k in FaultKind if k not in NEEDS_TOPIC)  # no topic: no leader to aim at
    drawn = random_schedule(random.Random(4), 6000, [1, 2, 3], kinds, faults=3)
    assert out.startswith("ok schedule ") and all(f'"at_ms": {f.at_ms}' in out for f in drawn)


def test_faults_timed_against_a_pipelines_steps_stay_simulator_only(lab):
    """run_pipeline's broker crash and lost coordinator answer are timed actions, which a
    wall-clock backend runs only inside wait(): refused, saying why, rather than never fired."""
    from course_lib.backend import MissingFault
    from course_lib.application.processing import run_pipeline

    with pytest.raises(MissingFault, match="timed_faults.*wall clock"):
        run_pipeline("at-least-once", "after_poll", broker_fault=(200, 2), backend=ComposedBackend(lab))
