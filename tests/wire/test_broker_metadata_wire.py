"""The real cluster's readiness probes (course_lib/real/broker_metadata.py), asked of each broker of
the simulated cluster over TCP: what they answer there is what the real-Kafka tests wait on."""

from course_lib.real.broker_metadata import leaders_seen, serves_as_leader


def test_every_broker_names_the_leader_and_only_the_leader_serves_the_partition(wire):
    topic = wire.create_topic("probed", partitions=1, replication_factor=3)
    addresses = wire.bootstrap_servers.split(",")
    seen = {address: leaders_seen(address, topic) for address in addresses}
    assert len({tuple(leaders) for leaders in seen.values()}) == 1, seen
    (leader,) = next(iter(seen.values()))
    serving = [address for address in addresses if serves_as_leader(address, topic)]
    assert serving == [f"{wire.host}:{wire.ports[leader]}"], (leader, serving)
    assert leaders_seen(addresses[0], "no-such-topic") == []
