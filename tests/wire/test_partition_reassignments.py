"""Partition reassignments on the wire cluster (issue 39): AlterPartitionReassignments moves a
partition's replicas the way Kafka's controller does - the new replica fetches, joins the ISR,
then the old one is dropped and deleted - and ListPartitionReassignments shows it under way.
The answers to the requests kafka-python's suite sends are Kafka 4.3.1's
(tests/real/test_partition_reassignments_real.py, same probe)."""

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition

from course_lib.wire import WireCluster

from .admin_api_probes import reassignment_answers

#: to its own replicas: nothing to do; broker 99: INVALID_REPLICA_ASSIGNMENT (39); a cancel with
#: none under way: NO_REASSIGNMENT_IN_PROGRESS (85); nothing listed afterwards
REASSIGNMENT_ANSWERS = {"same": None, "unknown broker": 39, "cancel": 85, "list": {}}


def test_reassignment_answers_as_kafka(wire):
    wire.create_topic("re", replication_factor=3)
    assert reassignment_answers(wire.bootstrap_servers, "re") == REASSIGNMENT_ANSWERS


def test_a_replica_moves_by_replication(no_leaks):
    """RF 1 on broker a, moved to broker b while b is paused: the move waits (b cannot fetch), the
    list shows b being added and a removed; b resumes, catches up, joins the ISR, and the
    partition is b's alone - with every record, which reached b by replication."""
    with WireCluster(brokers=3, seed=1, group_initial_rebalance_delay_ms=0) as wire:
        wire.create_topic("move", replication_factor=1)
        (a,) = wire.partition_info("move")["replica_nodes"]
        # kafka-python sends the reassignment to the controller its metadata names - the lowest live
        # id on the wire cluster - so the broker paused below is never broker 1
        b = next(x for x in (3, 2) if x != a)
        producer = KafkaProducer(bootstrap_servers=wire.bootstrap_servers, acks="all")
        for i in range(10):
            producer.send("move", f"v{i}".encode())
        producer.flush(30)
        producer.close()
        admin = KafkaAdminClient(bootstrap_servers=wire.bootstrap_servers)
        tp = TopicPartition("move", 0)
        try:
            # The admin finds the controller (a metadata request to whichever broker it likes) and
            # connects to it *before* b stops answering: asked later, it may ask b and wait forever.
            assert admin.list_partition_reassignments([tp]) == {}
            wire.pause(b)
            assert admin.alter_partition_reassignments({tp: [b]}) == {tp: None}
            under_way = admin.list_partition_reassignments([tp])
            wire.resume(b)
            done = wire.wait_until(lambda: wire.cluster.controller.partitions[("move", 0)].replicas == (b,))
            after = admin.list_partition_reassignments([tp])
        finally:
            admin.close()
        assert under_way == {tp: {"replicas": [b, a], "adding_replicas": [b], "removing_replicas": [a]}}
        assert done and after == {}
        assert wire.leader_of("move") == b
        assert wire.wait_until(lambda: ("move", 0) not in wire.cluster.brokers[a].partitions)
        consumer = KafkaConsumer(
            "move", bootstrap_servers=wire.bootstrap_servers, auto_offset_reset="earliest", consumer_timeout_ms=10_000
        )
        try:
            values = [m.value.decode() for m in consumer]
        finally:
            consumer.close()
        assert values == [f"v{i}" for i in range(10)]
