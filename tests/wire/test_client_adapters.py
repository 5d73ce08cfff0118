"""The client adapters beside kafka-python's (course_lib/client_adapters: confluent-kafka, Java)
give kafka-python's API over their own client and record what it did: a send's future completes
from the client's own report, the history holds the invocation and its outcome, and a setting
the client has no counterpart for is refused, saying so."""

import pytest

from course_lib.backend import ComposedBackend
from course_lib.client_adapters import CLIENTS, java_missing
from course_lib.history import OpName

OTHERS = ("confluent-kafka", "java")


@pytest.fixture
def stops_java_driver():
    yield
    from course_lib.client_adapters.for_java import stop_driver

    stop_driver()


@pytest.mark.parametrize("client", OTHERS)
def test_a_send_future_completes_from_the_clients_report_and_is_recorded(wire, stops_java_driver, client):
    if client == "java" and java_missing():
        pytest.skip(java_missing())
    b = ComposedBackend(wire, CLIENTS[client]())
    topic = b.create_topic("adapted", partitions=3, replication_factor=3)
    producer = b.producer(acks="all", enable_idempotence=True)
    try:
        futures = [producer.send(topic, f"v-{i}".encode(), key=f"k-{i}".encode()) for i in range(6)]
        producer.flush()
        metadata = [f.get(timeout=30) for f in futures]
        assert all(f.is_done and f.succeeded() and not f.failed() for f in futures)
        sends = [op for op in b.history if op.f == OpName.SEND]
        invoked = [op for op in sends if op.type == "invoke"]
        done = [op for op in sends if op.type == "ok"]
        # keyed: the partition the client's own partitioner picks is known, and recorded, at invocation
        assert [op.partition for op in invoked] == [m.partition for m in metadata]
        assert sorted((op.partition, op.offset) for op in done) == sorted((m.partition, m.offset) for m in metadata)
    finally:
        b.close_clients()


@pytest.mark.parametrize("client", OTHERS)
def test_a_setting_without_a_counterpart_is_refused_by_name(wire, stops_java_driver, client):
    b = ComposedBackend(wire, CLIENTS[client]())
    with pytest.raises(ValueError, match="proxy_url has no counterpart"):
        b.producer(proxy_url="socks5://127.0.0.1:1")


def _until(what: str, poll, done, timeout_s: float = 30) -> list:
    import time

    deadline = time.monotonic() + timeout_s
    while not done(got := poll()):
        assert time.monotonic() < deadline, f"{what} within {timeout_s} s; last poll {got}"
    return got


@pytest.mark.parametrize("client", OTHERS)
def test_a_share_consumer_in_a_process_of_its_own_keeps_the_contract_until_killed(wire, client):
    """The share contract's ``own_process`` (a worker an experiment crashes): the same records,
    delivery counts and acknowledgements as in this process; after kill() a call says the process
    is gone, and close() still ends it (no process, thread or pipe left: the wire fixture's check)."""
    if client == "java" and java_missing():
        pytest.skip(java_missing())
    from course_lib.experiments.on_kafka import share_groups
    from course_lib.experiments.share_group_experiments import worker

    topic, group = share_groups._setup(wire, {"share.record.lock.duration.ms": 5000})
    share_groups._produce(wire, topic, ["a", "b"])
    w = worker(client, wire.bootstrap_servers, topic, group, 5, own_process=True)
    try:
        got: list = []
        _until("both records", lambda: got.extend(w.poll(0.2)) or got, lambda g: len(g) == 2)
        assert [(value, count) for _, value, count, _ in got] == [(b"a", 1), (b"b", 1)]
        w.acknowledge(got[0][3], "accept")
        w.acknowledge(got[1][3], "release")
        w.commit()
        again = _until("the released record", lambda: w.poll(0.2), bool)
        assert [(value, count) for _, value, count, _ in again] == [(b"b", 2)]
        w.crash()
        with pytest.raises(Exception, match="killed or frozen|exited with code -9"):
            w.poll(0.1)
    finally:
        w.close()


def test_the_simulator_s_share_consumer_has_no_process_of_its_own():
    from course_lib.client_adapters import share_consumer

    with pytest.raises(ValueError, match="no process of its own"):
        share_consumer("simulator", {}, own_process=True)


@pytest.mark.parametrize("client", OTHERS)
def test_a_group_member_in_a_process_of_its_own_keeps_the_contract_until_killed(wire, client):
    """The consumer-group contract's ``own_process`` (a member an experiment crashes): it joins,
    owns every partition, reads what was written, counting it in ``seen``; after kill() a call
    says the process is gone, and close() still ends it (the wire fixture's check: nothing left)."""
    if client == "java" and java_missing():
        pytest.skip(java_missing())
    from course_lib.experiments.consumer_protocol_experiments import member
    from course_lib.experiments.on_kafka import share_groups

    topic = wire.create_topic(f"members-{client}", partitions=2)
    share_groups._produce(wire, topic, ["a", "b", "c"])
    m = member(client, wire.bootstrap_servers, f"members-{client}", [topic], own_process=True)
    try:
        _until("every partition, every record", lambda: (m.poll(), m.owned(), m.seen)[1:], lambda g: g == ([0, 1], 3))
        m.kill()
        with pytest.raises(Exception, match="killed or frozen|exited with code -9|died"):
            m.owned()
    finally:
        m.close()
