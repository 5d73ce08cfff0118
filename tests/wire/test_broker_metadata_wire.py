"""The real cluster's readiness probes (course_lib/real/broker_metadata.py), asked of each broker of
the simulated cluster over TCP: what they answer there is what the real-Kafka tests wait on."""

from course_lib.real.broker_metadata import leaders_seen, serves_as_leader, wait_for_new_leader


def test_every_broker_names_the_leader_and_only_the_leader_serves_the_partition(wire):
    topic = wire.create_topic("probed", partitions=1, replication_factor=3)
    addresses = wire.bootstrap_servers.split(",")
    seen = {address: leaders_seen(address, topic) for address in addresses}
    assert len({tuple(leaders) for leaders in seen.values()}) == 1, seen
    (leader,) = next(iter(seen.values()))
    serving = [address for address in addresses if serves_as_leader(address, topic)]
    assert serving == [f"{wire.host}:{wire.ports[leader]}"], (leader, serving)
    assert leaders_seen(addresses[0], "no-such-topic") == []


def test_after_a_crash_the_wait_returns_the_new_leader_all_brokers_name(wire):
    topic = wire.create_topic("re-elected", partitions=1, replication_factor=3)
    old = wire.leader_of(topic)
    wire.crash(old)
    live = wire.live_bootstrap_servers().split(",")
    new = wait_for_new_leader(live, topic, old, timeout_s=30)
    assert new != old and new == wire.leader_of(topic)
    assert {leaders_seen(address, topic)[0] for address in live} == {new}
    assert serves_as_leader(f"{wire.host}:{wire.ports[new]}", topic)
    try:
        wait_for_new_leader(live, topic, new, timeout_s=0.2)  # nobody replaces the live leader
    except TimeoutError as e:
        assert f"{topic}-0's leader" in str(e)
    else:
        raise AssertionError("a leader that did not change was reported as new")
