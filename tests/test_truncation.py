"""A returning ex-leader truncates the tail it wrote that the new leader never had
(leader-epoch based, KIP-101 / diverging epochs in Fetch)."""

TOPIC = "t"  # the topic the `cluster` fixture in conftest.py creates


def test_divergent_tail_is_truncated_by_leader_epoch(cluster, make_producer):
    producer = make_producer(acks=1, enable_idempotence=False, retries=0)
    producer.send(TOPIC, b"committed").get()
    cluster.run_for(600)
    cluster.pause(2)
    cluster.pause(3)
    for v in (b"x1", b"x2", b"x3"):  # separate batches: the paused followers take in only the first
        producer.send(TOPIC, v)
        cluster.run_for(5)  # broker 1 appends and acknowledges
    cluster.crash(1)
    cluster.resume(2)
    cluster.resume(3)
    cluster.run_for(3600)
    new_leader = cluster.leader_of(TOPIC)
    assert new_leader in (2, 3)
    cluster.restart(1)
    assert cluster.run_until(lambda: cluster.partition_state(TOPIC)["isr"] == [1, 2, 3], 20_000)
    logs = {b: [r.value for _, r, _ in cluster.brokers[b].partitions[(TOPIC, 0)].log.records()] for b in (1, 2, 3)}
    assert logs[1] == logs[2] == logs[3]  # replicas agree again
    assert logs[1][0] == b"committed"
    truncations = [op for op in cluster.history if op.f == "truncate"]
    assert truncations and truncations[0].process == "broker-1"
    lost = set(truncations[0].value) - set(v.decode() for v in logs[1])
    assert lost  # what only broker 1 had is gone
    # followers learn epochs from the batches they copy: theirs is a prefix of the leader's cache
    epochs = cluster.brokers[1].partitions[(TOPIC, 0)].log.epochs
    leader_epochs = cluster.brokers[new_leader].partitions[(TOPIC, 0)].log.epochs
    assert epochs == leader_epochs[: len(epochs)]
