"""Topic deletion in the simulated cluster, after Kafka's DeleteTopics: the controller removes
the topic from the metadata, each broker deletes its replicas as the update reaches it (a broker
that was down, when it comes back), clients get UNKNOWN_TOPIC_OR_PARTITION, and a topic created
again under the same name is a new topic (new id, offsets from 0). The invariants checker runs
after every event of every test here."""

import random
import warnings

import pytest
from kafka import TopicPartition
from kafka import errors as Errors

from course_lib.broker import Cluster
from course_lib.broker import broker as broker_module
from course_lib.broker.broker import Broker
from course_lib.broker.protocol import FetchResponse
from course_lib.broker.invariants import InvariantViolation, ReplicationInvariants
from course_lib.clients import KafkaConsumer, KafkaProducer


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def checked(seed: int = 1, **options) -> tuple[Cluster, ReplicationInvariants]:
    cluster = Cluster(brokers=3, seed=seed, **options)
    return cluster, ReplicationInvariants.attach(cluster)


def replicas(cluster: Cluster) -> dict:
    """broker -> {(topic, partition): (topic id, LEO)} of the replicas it holds."""
    return {
        b: {tp: (p.topic_id, p.log.leo) for tp, p in sorted(broker.partitions.items())}
        for b, broker in cluster.brokers.items()
    }


def produce(cluster: Cluster, topic: str, values, partition: int = 0) -> list[int]:
    producer = KafkaProducer(bootstrap_servers=cluster, acks="all")
    futures = [producer.send(topic, v.encode(), partition=partition) for v in values]
    producer.flush()
    offsets = [f.get(timeout=1).offset for f in futures]
    producer.close()
    return offsets


def events(cluster: Cluster, f: str) -> list[dict]:
    return [op.value | {"process": op.process} for op in cluster.history.ops if op.f == f]


def test_a_deleted_topic_is_gone_from_the_controller_every_broker_and_the_metadata():
    cluster, checker = checked()
    cluster.create_topic("orders", partitions=2, min_insync_replicas=2)
    produce(cluster, "orders", ["a", "b", "c"])
    cluster.delete_topic("orders")
    assert "orders" not in cluster.controller.configs
    assert all(not held for held in replicas(cluster).values())
    for broker in cluster.brokers.values():
        assert "orders" not in broker.topic_configs and not broker.metadata.get(("orders", 0))
    with pytest.raises(ValueError, match="no topic 'orders'"):
        cluster.inspect("orders")
    assert events(cluster, "delete_topic") == [{"topic": "orders", "topic_id": 1, "process": "controller"}]
    deleted = sorted((e["process"], e["partition"], e["leo"]) for e in events(cluster, "delete_replica"))
    assert [d for d in deleted if d[1] == 0] == [("broker-1", 0, 3), ("broker-2", 0, 3), ("broker-3", 0, 3)]
    assert checker.checks > 0


def test_deleting_a_missing_or_internal_topic_says_what_is_wrong():
    cluster, _ = checked()
    with pytest.raises(ValueError, match="no topic 'nope'"):
        cluster.delete_topic("nope")
    cluster.controller.ensure_internal_topic("__consumer_offsets")
    cluster.run_for(100)
    with pytest.raises(ValueError, match="internal topic '__consumer_offsets'"):
        cluster.delete_topic("__consumer_offsets")
    with pytest.raises(Errors.UnknownTopicOrPartitionError):
        cluster.controller.delete_topic("nope")


def test_a_topic_created_again_is_a_new_topic_from_offset_0():
    cluster, checker = checked()
    cluster.create_topic("orders", min_insync_replicas=2)
    assert produce(cluster, "orders", ["old-1", "old-2", "old-3"]) == [0, 1, 2]
    old_id = cluster.controller.topic_ids["orders"]
    cluster.delete_topic("orders")
    cluster.create_topic("orders", min_insync_replicas=2)
    assert cluster.controller.topic_ids["orders"] != old_id
    assert cluster.inspect("orders").hw == 0
    assert produce(cluster, "orders", ["new-1"]) == [0]
    consumer = KafkaConsumer(bootstrap_servers=cluster, auto_offset_reset="earliest")
    consumer.assign([TopicPartition("orders", 0)])
    values = [r.value for rs in consumer.poll(timeout_ms=1000).values() for r in rs]
    assert values == [b"new-1"]
    assert checker.checks > 0  # committed_kept starts again for the new topic: no violation


def test_committed_offsets_of_a_deleted_topic_go_with_it():
    cluster, _ = checked(group_initial_rebalance_delay_ms=0)
    cluster.create_topic("orders", min_insync_replicas=2)
    produce(cluster, "orders", ["a", "b"])
    consumer = KafkaConsumer("orders", bootstrap_servers=cluster, group_id="g", auto_offset_reset="earliest")
    read = []
    for _ in range(20):
        read += [r.value for rs in consumer.poll(timeout_ms=200).values() for r in rs]
        if len(read) == 2:
            break
    consumer.commit()
    assert consumer.committed(TopicPartition("orders", 0)) == 2
    consumer.close()
    cluster.delete_topic("orders")
    cluster.run_for(100)
    cluster.create_topic("orders", min_insync_replicas=2)
    again = KafkaConsumer(bootstrap_servers=cluster, group_id="g", auto_offset_reset="earliest")
    assert again.committed(TopicPartition("orders", 0)) is None


def test_a_broker_that_was_down_deletes_the_topic_when_it_comes_back():
    cluster, checker = checked(seed=3)
    cluster.create_topic("orders", partitions=2, min_insync_replicas=2)
    produce(cluster, "orders", ["a", "b", "c", "d"])
    cluster.crash(3)
    cluster.run_for(10_000)  # fenced
    cluster.delete_topic("orders")
    assert replicas(cluster)[3] == {("orders", 0): (1, 4), ("orders", 1): (1, 0)}  # still on its disk
    cluster.restart(3)
    assert cluster.run_until(lambda: not cluster.brokers[3].partitions, 5_000)
    assert sorted(e["partition"] for e in events(cluster, "delete_replica") if e["process"] == "broker-3") == [0, 1]
    assert checker.checks > 0


def test_a_broker_down_while_the_topic_is_created_again_deletes_the_old_log():
    """Crashed but not yet fenced, it gets a replica of the new topic; back, its snapshot names
    the topic under another id, so the log on its disk is a stray of the old topic."""
    cluster, checker = checked(seed=3)
    cluster.create_topic("orders", min_insync_replicas=2)
    produce(cluster, "orders", ["old-1", "old-2", "old-3", "old-4"])
    cluster.crash(3)
    cluster.delete_topic("orders")
    cluster.create_topic("orders", min_insync_replicas=2)
    new_id = cluster.controller.topic_ids["orders"]
    assert replicas(cluster)[3] == {("orders", 0): (1, 4)}  # on its disk: the old topic's log
    produce(cluster, "orders", ["new-1"])
    cluster.restart(3)
    assert cluster.run_until(lambda: len(cluster.inspect("orders").isr) == 3, 30_000)
    assert replicas(cluster) == {b: {("orders", 0): (new_id, 1)} for b in (1, 2, 3)}
    assert ("broker-3", 1, 4) in [(e["process"], e["topic_id"], e["leo"]) for e in events(cluster, "delete_replica")]
    assert [v for _, _, v in cluster.committed_records("orders")] == [b"new-1"]
    assert checker.checks > 0


def test_a_cut_off_follower_of_the_old_topic_is_refused_by_the_new_leader(monkeypatch):
    """An isolated broker keeps the old replica and may fetch with the old topic id once the
    network heals; the new leader refuses it (INCONSISTENT_TOPIC_ID, Fetch v13's topic ids) and
    the broker's next snapshot makes it delete the stray and start again."""
    cluster, checker = checked(seed=4)
    cluster.create_topic("orders", min_insync_replicas=2)
    produce(cluster, "orders", ["old-1", "old-2", "old-3"])
    cluster.isolate(3)
    cluster.delete_topic("orders")
    cluster.create_topic("orders", min_insync_replicas=1)
    produce(cluster, "orders", ["new-1"])
    stale = cluster.brokers[3].partitions[("orders", 0)]
    assert stale.topic_id == 1 and stale.log.leo == 3
    answers = []
    # the broker dispatches through its handler table: watch the answers there, then pass them on
    handle = broker_module.HANDLERS[FetchResponse]

    def watch(broker, src, resp):
        if broker is cluster.brokers[3] and resp.tp == ("orders", 0):
            answers.append(resp.error)
        handle(broker, src, resp)

    monkeypatch.setitem(broker_module.HANDLERS, FetchResponse, watch)
    cluster.heal()
    stale.send_fetch()  # before its heartbeat brings the snapshot
    cluster.run_until(lambda: answers, 1000)
    assert answers == [Errors.InconsistentTopicIdError]
    assert cluster.heal_all(60_000)
    assert replicas(cluster)[3] == {("orders", 0): (cluster.controller.topic_ids["orders"], 1)}
    assert checker.checks > 0


def test_a_producer_of_a_deleted_topic_gets_kafkas_errors():
    cluster, _ = checked()
    cluster.create_topic("orders", min_insync_replicas=2)
    producer = KafkaProducer(bootstrap_servers=cluster, acks="all", delivery_timeout_ms=3000, request_timeout_ms=1000)
    producer.send("orders", b"a").get(timeout=1)
    cluster.delete_topic("orders")
    for broker in cluster.brokers.values():
        assert broker.no_replica_error(("orders", 0), produce=True) is Errors.UnknownTopicOrPartitionError
    future = producer.send("orders", b"b")
    producer.flush()
    with pytest.raises(Errors.KafkaTimeoutError):
        future.get(timeout=1)


def test_a_producer_finds_the_leader_of_a_topic_created_again():
    """The producer knew the old topic's leader at a later epoch than the new topic's first; the
    new topic id in the metadata answer makes it drop the old leader (kafka-python does so on a
    topic id change), so its sends reach the new leader."""
    cluster, _ = checked(seed=5)
    cluster.create_topic("orders", min_insync_replicas=2)
    producer = KafkaProducer(bootstrap_servers=cluster, acks="all", enable_idempotence=False)
    old_leader = cluster.leader_of("orders")
    cluster.crash(old_leader)
    cluster.run_for(10_000)
    cluster.restart(old_leader)
    assert cluster.heal_all()
    producer.send("orders", b"old").get(timeout=1)
    assert producer._leaders[("orders", 0)][1] >= 1  # it knows a later leader epoch
    cluster.delete_topic("orders")
    cluster.create_topic("orders", min_insync_replicas=2)  # epoch 0 again, maybe another leader
    assert producer.send("orders", b"new").get(timeout=1).offset == 0


def test_the_simulator_backend_deletes_a_topic_it_created():
    from course_lib.backends.sim import SimBackend

    backend = SimBackend.start(seed=1)
    name = backend.create_topic("orders", partitions=2)
    backend.delete_topic(name)
    assert all(not held for held in replicas(backend.cluster.cluster).values())
    with pytest.raises(Errors.UnknownTopicOrPartitionError):  # as the Kafka backends raise
        backend.delete_topic(name)


def random_deletions(seed: int) -> ReplicationInvariants:
    """A seeded mix of produces, broker faults, deletions and re-creations of one topic name,
    checked after every event; ends healed, every replica the current topic's."""
    rng = random.Random(seed)
    cluster, checker = checked(seed=seed, broker_session_timeout_ms=2000)
    cluster.create_topic("t", partitions=2, min_insync_replicas=2)
    producer = KafkaProducer(
        bootstrap_servers=cluster, acks=1, delivery_timeout_ms=2000, request_timeout_ms=1000, enable_idempotence=False
    )
    for step in range(12):
        action = rng.choice(["produce", "produce", "crash", "restart", "isolate", "heal", "delete", "create"])
        down = [b for b, br in cluster.brokers.items() if not br.alive]
        if action == "produce" and "t" in cluster.controller.configs:
            for i in range(3):
                producer.send("t", f"{seed}-{step}-{i}".encode())
        elif action == "crash" and len(down) < 2:
            cluster.crash(rng.choice([b for b in cluster.brokers if b not in down]))
        elif action == "restart" and down:
            cluster.restart(rng.choice(down))
        elif action == "isolate":
            cluster.isolate(rng.randrange(1, 4))
        elif action == "heal":
            cluster.heal()
        elif action in ("delete", "create") and "t" in cluster.controller.configs:
            cluster.delete_topic("t")
            cluster.run_for(rng.choice([0, 5, 3000]))
        if "t" not in cluster.controller.configs and len(cluster.controller.live_brokers()) == 3:
            # Kafka places replicas on unfenced brokers only: with all 3 unfenced it creates RF 3
            # (a crashed broker is unfenced until its session times out)
            cluster.create_topic("t", partitions=rng.choice([1, 2]), min_insync_replicas=rng.choice([1, 2]))
        cluster.run_for(rng.uniform(0, 3000))
    assert cluster.heal_all(120_000), f"seed {seed}: did not settle"
    if "t" not in cluster.controller.configs:
        assert cluster.run_until(lambda: len(cluster.controller.live_brokers()) == 3, 30_000)
        cluster.create_topic("t")
        assert cluster.heal_all(120_000), f"seed {seed}: did not settle"
    topic_id = cluster.controller.topic_ids["t"]
    for b, held in replicas(cluster).items():
        assert {tp: tid for tp, (tid, _) in held.items()} == {
            ("t", p): topic_id for p in range(cluster.topic_config("t").partitions)
        }, f"seed {seed}: broker {b} holds {held}"
    return checker


@pytest.mark.parametrize("seed", range(100))
def test_invariants_hold_through_seeded_deletions_and_faults(seed):
    try:
        checker = random_deletions(seed)
    except InvariantViolation as e:
        pytest.fail(f"seed {seed}: {e}  (replay: random_deletions({seed}))")
    assert checker.checks > 0


def test_a_broker_that_keeps_deleted_replicas_is_caught(monkeypatch):
    monkeypatch.setattr(Broker, "_delete_replica", lambda self, tp: None)
    cluster, _ = checked()
    cluster.create_topic("orders")
    with pytest.raises(InvariantViolation, match="deleted_replicas_gone"):
        cluster.delete_topic("orders")
