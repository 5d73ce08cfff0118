"""The simulator does what Kafka 4.3.1 and kafka-python 3.0.12 do, one test per
behaviour, each against the outcome measured on the real lab cluster. The same experiments run on
both backends in tests/real/test_fidelity_differential.py."""

import os
import subprocess
import sys
import warnings

import pytest
from kafka import errors as Errors

from course_lib.experiments import behaviour_probes as probes
from course_lib.backend import SimBackend
from course_lib.broker import Cluster
from course_lib.clients import KafkaConsumer, KafkaProducer
from course_lib.grading.lessons.ex02_acks_and_durability import _ex02_q2
from course_lib.viz.tradeoffs import loss_vs_acks


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def sim(**options):
    return SimBackend.start(seed=1, **{**probes.SIM_TIMING, **options})


def test_the_hw_does_not_advance_under_min_isr():
    assert probes.strict_min_isr_high_watermark(sim()).numbers == {"acknowledged": 5, "read": 0, "isr": 2}


def test_an_acks_all_request_in_purgatory_times_out_when_the_isr_drops_below_min_isr():
    c = Cluster(3, seed=2, **probes.SIM_TIMING)
    c.create_topic("t", replication_factor=3, min_insync_replicas=2)
    c.pause(2)
    c.pause(3)  # the followers stop fetching: the write waits in purgatory
    p = KafkaProducer(bootstrap_servers=c, acks="all", request_timeout_ms=30_000, retries=0, delivery_timeout_ms=60_000)
    f = p.send("t", b"v")
    c.run_for(29_000)  # fenced after 3 s: ISR {1} < 2, the HW stays, nothing completes it
    assert not f.is_done and c.partition_state("t")["isr"] == [1]
    c.run_for(2_000)
    assert isinstance(f.exception, (Errors.KafkaTimeoutError, Errors.RequestTimedOutError))


def test_the_effective_min_isr_is_capped_by_the_replication_factor():
    c = Cluster(3, seed=1)
    c.create_topic("t", replication_factor=1, min_insync_replicas=2)
    p = KafkaProducer(bootstrap_servers=c, acks="all")
    assert p.send("t", b"v").get(timeout=5).offset == 0  # min(2, 1) = 1: accepted and readable
    assert c.committed_records("t") == [(0, None, b"v")]


def test_elr_elects_a_fenced_isr_member_cleanly_once_it_is_back():
    assert probes.elr_clean_election(sim()).numbers == {
        "acknowledged": 3,
        "new_leader_is_the_paused_follower": True,
        "read": 3,
    }


def test_without_elr_the_partition_waits_for_the_last_isr_member():
    out = probes.elr_clean_election(sim(eligible_leader_replicas_enable=False)).numbers
    assert out["new_leader_is_the_paused_follower"] is False and out["read"] == 0


def test_an_unclean_restart_leaves_the_elr_and_the_last_leader_is_elected_again():
    c = Cluster(3, seed=1, **probes.SIM_TIMING)
    c.create_topic("t", replication_factor=3, min_insync_replicas=2)
    c.crash(2)
    c.crash(3)
    c.run_for(5000)
    s = c.partition_state("t")
    assert (s["isr"], s["elr"]) == ([1], [3])  # 2 left while the ISR was at min ISR, 3 below it
    c.crash(1)
    c.run_for(5000)
    s = c.partition_state("t")
    assert (s["leader"], s["isr"], s["elr"], s["last_known_leader"]) == (None, [], [1, 3], 1)
    c.restart(3)  # SIGKILLed: an unclean shutdown takes it out of the ELR
    c.run_for(5000)
    assert c.partition_state("t")["elr"] == [1] and c.leader_of("t") is None
    c.restart(1)
    c.run_for(5000)
    assert c.leader_of("t") == 1  # ISR and ELR empty: the last known leader is elected again
    elect = [op.value for op in c.history if op.f == "elect"][-1]
    assert elect["unclean"] is True and elect["leader"] == 1  # Kafka flags it unclean


def test_kafka_python_commits_a_transaction_whose_send_failed():
    assert probes.transaction_with_a_failed_send(sim()).numbers == {
        "x": "ok",
        "y": "KafkaTimeoutError",
        "commit": "ok",
        "read_committed_a": [b"x"],
        "read_committed_b": [],
    }


def test_a_non_retriable_send_error_still_makes_the_transaction_abortable():
    c = Cluster(3, seed=1)
    c.create_topic("t", replication_factor=3)
    p = KafkaProducer(bootstrap_servers=c, transactional_id="t1")
    p.init_transactions()
    p.begin_transaction()
    p._transaction_send_failed(Errors.MessageSizeTooLargeError("too large"))
    with pytest.raises(Errors.KafkaError, match="abort"):
        p.commit_transaction()


def test_after_an_expired_idempotent_batch_the_next_one_is_never_sent():
    """kafka-python 3.0.12 resets its producer id and never asks for a new one (measured on the
    lab cluster by tests/real/test_fidelity_differential.py: the next batch still unsent after
    10 s, delivery_timeout_ms=3000, and close(timeout=0) refused)."""
    assert probes.idempotent_batch_expired(sim()).numbers == {
        "first": "KafkaTimeoutError",
        "second_after_10s": "pending",
        "close(timeout=0)": "KafkaTimeoutError",
        "read": [],
    }


def test_close_with_a_record_unfinished_raises_and_leaves_the_producer_open():
    """kafka-python 3.0.12's close(timeout=0) flushes first: it raises and the producer keeps
    sending (tests/wire/test_behaviour_probes_wire.py runs the same steps with kafka-python)."""
    assert probes.close_with_a_record_unfinished(sim()).numbers == {
        "close(timeout=0)": "KafkaTimeoutError",
        "first": "ok",
        "second": "ok",
        "read": [b"first", b"second"],
    }


def test_the_wedged_producer_says_why_flush_times_out_and_a_new_producer_works():
    c = Cluster(3, seed=1, **probes.SIM_TIMING)
    c.create_topic("t", replication_factor=3, min_insync_replicas=3)
    c.crash(3)
    c.run_for(5000)  # fenced: ISR {1, 2} < min ISR 3
    p = KafkaProducer(bootstrap_servers=c, delivery_timeout_ms=3000, request_timeout_ms=1000, linger_ms=0)
    first = p.send("t", b"first")
    with pytest.raises(Errors.KafkaTimeoutError):
        first.get(timeout=10)
    assert p.state["producer_id"] == -1 and p._producer_id_lost
    c.restart(3)
    c.run_for(15_000)
    second = p.send("t", b"second")
    with pytest.raises(Errors.KafkaTimeoutError, match="lost its producer id"):
        p.flush(timeout=60)
    assert not second.is_done  # not expired either: kafka-python checks no deadline without an id
    with pytest.raises(Errors.KafkaTimeoutError):  # close() flushes first, as kafka-python's does
        p.close(timeout=0)
    fresh = KafkaProducer(bootstrap_servers=c, delivery_timeout_ms=3000, request_timeout_ms=1000)
    assert fresh.send("t", b"third").get(timeout=10).offset == 0


def test_acks_0_to_a_deposed_leader_loses_only_the_election_window():
    c = Cluster(3, seed=3, **probes.SIM_TIMING)
    c.create_topic("t", replication_factor=3, min_insync_replicas=1)
    p = KafkaProducer(bootstrap_servers=c, acks=0, enable_idempotence=False, linger_ms=0)
    c.pause(1)  # the leader freezes; the controller fences it and elects 2
    c.run_for(5000)
    assert c.leader_of("t") == 2
    c.resume(1)  # alive again, deposed: it refuses the produce and closes the connection
    for i in range(20):
        p.send("t", f"v{i}".encode())
        c.run_for(100)
    p.flush()
    values = [v for _, _, v in c.committed_records("t")]
    assert values[-15:] == [f"v{i}".encode() for i in range(5, 20)], values  # the producer moved on


def test_the_backend_experiments_give_what_kafka_gives():
    assert probes.acks0_to_a_deposed_leader(sim()).numbers == {"last_10_kept": True}
    assert probes.consumer_after_unclean_election(sim()).numbers == {
        "read_before": 6,
        "read_while_its_only_broker_is_down": [],
        "read_after_it_is_back": [(3 + i, f"new{i}".encode()) for i in range(6)],
    }


def test_no_unknown_producer_id_for_a_producer_without_state():
    c = Cluster(3, seed=1)
    c.create_topic("t", replication_factor=3)
    p = KafkaProducer(bootstrap_servers=c, acks="all", enable_idempotence=True)
    p.send("t", b"a").get(timeout=5)
    for broker in c.brokers.values():  # the state is gone (as after producer-id expiration)
        broker.partitions[("t", 0)].producers.entries.clear()
    assert p.send("t", b"b").get(timeout=5).offset == 1


def test_the_consumer_seeks_to_the_divergence_point_after_an_unclean_election():
    """A consumer that knows a live broker (it started while all three were up) learns the new
    leader at once and seeks back to where the old leader's epoch ended on it."""
    from kafka.structs import TopicPartition

    c = Cluster(3, seed=1, **probes.SIM_TIMING)
    c.create_topic("t", replication_factor=3, min_insync_replicas=1, unclean_leader_election_enable=True)
    p = KafkaProducer(bootstrap_servers=c, acks=1, enable_idempotence=False)
    for i in range(3):
        p.send("t", f"old{i}".encode())
    p.flush()
    c.run_for(1000)  # replicated everywhere
    consumer = KafkaConsumer(bootstrap_servers=c, auto_offset_reset="earliest", enable_auto_commit=False)
    consumer.assign([TopicPartition("t", 0)])
    seen = [r.value for rs in consumer.poll(timeout_ms=2000).values() for r in rs]
    assert len(seen) == 3
    c.crash(2)
    c.crash(3)
    c.run_for(5000)
    for i in range(3, 6):
        p.send("t", f"old{i}".encode())  # only broker 1 has these
    p.flush()
    seen = [r.value for rs in consumer.poll(timeout_ms=2000).values() for r in rs]
    assert len(seen) == 3  # min ISR 1: the lone leader's HW covers what only it has
    c.crash(1)
    c.restart(2)
    c.run_for(5000)
    assert c.leader_of("t") == 2  # unclean: offsets 3.. are gone
    for i in range(3):
        p.send("t", f"new{i}".encode())
    p.flush()
    seen = [(r.offset, r.value) for rs in consumer.poll(timeout_ms=5000).values() for r in rs]
    # position 6 was past the new leader's end of epoch 0 (3): back to 3, not silently past
    # new0..new2 (which took offsets 3-5) and not to the beginning (auto_offset_reset)
    assert seen == [(3, b"new0"), (4, b"new1"), (5, b"new2")]
    detected = [op.value for op in c.history if op.f == "truncation_detected"]
    assert detected == [{"partition": 0, "position": 6, "diverging_offset": 3}]


def test_a_client_knows_only_the_brokers_its_last_metadata_listed():
    """Metadata lists live brokers; kafka-python never goes back to bootstrap_servers. A consumer
    that started while only broker 1 was up asks only broker 1, even when 2 and 3 are back."""
    c = Cluster(3, seed=1, **probes.SIM_TIMING)
    c.create_topic("t", replication_factor=3, min_insync_replicas=1)
    p = KafkaProducer(bootstrap_servers=c, acks=1)  # knows all three brokers
    c.crash(2)
    c.crash(3)
    c.run_for(5000)  # fenced
    from kafka.structs import TopicPartition

    p.send("t", b"a").get(timeout=5)
    consumer = KafkaConsumer(bootstrap_servers=c, auto_offset_reset="earliest")
    consumer.assign([TopicPartition("t", 0)])
    assert len(consumer.poll(timeout_ms=1000)) == 1
    assert consumer._known_brokers == (1,)
    c.restart(2)
    c.restart(3)
    c.run_for(5000)
    assert consumer._known_brokers == (1,)  # no metadata refresh needed: still only 1
    c.crash(1)
    c.run_for(5000)
    assert c.leader_of("t") in (2, 3)
    p.send("t", b"b").get(timeout=5)  # the producer finds the new leader
    assert consumer.poll(timeout_ms=5000) == {}  # the consumer asks only 1, in vain
    assert consumer._known_brokers == (1,)
    c.restart(1)
    c.run_for(5000)
    assert [r.value for rs in consumer.poll(timeout_ms=2000).values() for r in rs] == [b"b"]
    assert consumer._known_brokers == (1, 2, 3)


def test_a_zombies_send_gets_invalid_producer_epoch_and_its_commit_a_kafka_error_in_an_error_state():
    assert probes.zombie_transactional_send(sim()).numbers == {
        "late": "InvalidProducerEpochError",
        "commit": "KafkaError",
        "read_committed": [],
    }


def test_min_isr_1_with_unclean_election_loses_acknowledged_writes_with_acks_all():
    out = loss_vs_acks(range(20), min_insync_replicas=1, unclean_leader_election_enable=True)
    assert out["acks=all"]["trials with loss"] > 0
    safe = loss_vs_acks(range(20), min_insync_replicas=2)
    assert safe["acks=all"]["trials with loss"] == 0


def test_the_safe_settings_exercise_rejects_min_isr_1_with_unclean_election():
    """Regression (issue 11): with 3 s trials the ISR never shrank and this got full marks."""
    unsafe = _ex02_q2(
        {"producer": {"acks": "all"}, "topic": {"min_insync_replicas": 1, "unclean_leader_election_enable": True}},
        range(20),
    )
    assert not all(p.passed for p in unsafe)
    safe = _ex02_q2({"producer": {"acks": "all"}, "topic": {"min_insync_replicas": 2}}, range(20))
    assert all(p.passed for p in safe), [p.detail for p in safe if not p.passed]


def test_a_hung_transaction_holds_back_other_producers_committed_records_at_the_lso():
    """Lesson 06: the LSO is the first offset of the oldest open transaction, for everyone."""
    c = Cluster(3, seed=1)
    c.create_topic("t", replication_factor=3, min_insync_replicas=2)
    hung = KafkaProducer(bootstrap_servers=c, transactional_id="hung", transaction_timeout_ms=60_000)
    hung.init_transactions()
    hung.begin_transaction()
    hung.send("t", b"hung-0")
    hung.flush()  # written, never committed
    other = KafkaProducer(bootstrap_servers=c, acks="all")
    other.send("t", b"other-0").get(timeout=5)  # committed (non-transactional) after it
    assert [v for _, _, v in c.committed_records("t")] == [b"hung-0", b"other-0"]
    assert c.committed_records("t", read_committed=True) == []  # held at the LSO (offset 0)


def test_the_transactional_processor_aborts_and_redoes_a_batch_whose_output_send_failed(monkeypatch):
    """kafka-python would commit the batch without the failed output (and its input's offset):
    the processor checks its sends first, aborts and redoes the batch."""
    from course_lib.clients.future import FutureRecordMetadata, ProduceResult
    from course_lib.application.processing import run_pipeline

    send, failed = KafkaProducer.send, []

    def send_failing_once(self, topic, value=None, **kwargs):
        if self.config["transactional_id"] is not None and not failed:
            failed.append(value)  # this send never reaches a broker; the application is told
            result = ProduceResult(topic, 0, [None])
            result.fail(Errors.KafkaTimeoutError("Expiring 1 record(s)"))
            return FutureRecordMetadata(result, 0)
        return send(self, topic, value, **kwargs)

    monkeypatch.setattr(KafkaProducer, "send", send_failing_once)
    r = run_pipeline("exactly-once-kafka", crash_point=None, seed=1)
    assert failed and sorted(r.sink) == sorted(f"msg-{i}" for i in range(20)), r.sink
    aborted = [
        op
        for op in r.history
        if op.f == "end_transaction"
        and op.type == "ok"
        and isinstance(op.value, dict)
        and op.value.get("commit") is False
    ]
    assert len(aborted) == 1


@pytest.mark.parametrize(
    "name",
    [
        "course_lib.broker.invariants",
        "bench.replication_trials",
        "course_lib.experiments.behaviour_probes",
        "course_lib.nemesis",
    ],
)
def test_docstring_examples(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("version", ["4.3.1", "4.4.0"])
def test_the_matrices_name_the_kafka_release_the_lab_runs(version):
    """A run on Kafka 4.4.0 (COURSE_KAFKA_VERSION) must not print "Kafka 4.3.1" in its titles."""
    shown = subprocess.run(
        [
            sys.executable,
            "-c",
            "from course_lib.experiments import protocol_matrix as p; print([c.title for c in p.COLUMNS])",
        ],
        env={**os.environ, "COURSE_KAFKA_VERSION": version},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"Java {version} on Kafka {version}" in shown
    other = "4.4.0" if version == "4.3.1" else "4.3.1"
    assert other not in shown
