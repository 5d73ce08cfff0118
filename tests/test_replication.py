"""Replication: followers fetch, the leader tracks their LEO, HW = smallest LEO in the ISR,
and the ISR shrinks and expands with replica.lag.time.max.ms."""

from course_lib.broker.broker import node_name

TOPIC = "t"  # the topic the `cluster` fixture in conftest.py creates


def replicas(cluster):
    return cluster.partition_state(TOPIC)["replicas"]


def test_followers_copy_the_log_and_the_high_watermark_follows(cluster, make_producer):
    producer = make_producer()
    futures = [producer.send(TOPIC, f"m-{i}".encode()) for i in range(5)]
    producer.flush()
    assert [f.get().offset for f in futures] == [0, 1, 2, 3, 4]
    cluster.run_for(600)  # followers learn the HW on their next fetch
    assert {b: (r["leo"], r["hw"]) for b, r in replicas(cluster).items()} == {1: (5, 5), 2: (5, 5), 3: (5, 5)}


def test_high_watermark_waits_for_the_slowest_isr_member(cluster, make_producer):
    producer = make_producer(acks=1, enable_idempotence=False)
    cluster.pause(3)  # in the ISR, but fetching nothing
    producer.send(TOPIC, b"a").get()
    producer.send(TOPIC, b"b").get()
    cluster.run_for(100)
    leader = replicas(cluster)[1]
    assert leader["leo"] == 2 and leader["hw"] <= 1  # broker 3 holds the HW back
    assert cluster.partition_state(TOPIC)["isr"] == [1, 2, 3]


def test_a_follower_that_stops_fetching_leaves_the_isr_then_rejoins(cluster, make_producer):
    producer = make_producer()
    producer.send(TOPIC, b"a").get()
    cluster.network.cut(node_name(1), node_name(3))  # 3 still heartbeats to the controller
    producer.send(TOPIC, b"b").get(timeout=60)  # acks=all completes once 3 is dropped
    state = cluster.partition_state(TOPIC)
    assert state["isr"] == [1, 2]
    assert any(op.f == "isr" and op.value["isr"] == [1, 2] for op in cluster.history)
    cluster.heal()
    # the follower's lost fetch is retried after replica_socket_timeout_ms (30 s, as in Kafka)
    assert cluster.run_until(lambda: cluster.partition_state(TOPIC)["isr"] == [1, 2, 3], 40_000)
    assert replicas(cluster)[3]["leo"] == 2


def test_consumers_see_only_records_below_the_high_watermark(cluster, make_producer):
    producer = make_producer(acks=1, enable_idempotence=False)
    cluster.pause(2)
    cluster.pause(3)
    producer.send(TOPIC, b"a").get()
    producer.send(TOPIC, b"b").get()
    assert cluster.committed_records(TOPIC) == []
    cluster.resume(2)
    cluster.resume(3)
    cluster.run_for(100)
    assert [v for _, _, v in cluster.committed_records(TOPIC)] == [b"a", b"b"]
