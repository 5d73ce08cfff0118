"""The one admin view of a real cluster (course_lib.real.admin), against a stand-in for
kafka-python's KafkaAdminClient: what LocalCluster and RemoteCluster both answer, without a JVM."""

import threading
import time

import pytest
from kafka.errors import (
    InvalidReplicationFactorError,
    KafkaConnectionError,
    TopicAlreadyExistsError,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)

from course_lib.clusters import TopicSpec
from course_lib.real.admin import ClusterAdmin, ClusterMetadata
from course_lib.real.errors import ClusterError


class FakeAdmin:
    """Answers as KafkaAdminClient does: describe_topics reports errors in the answer."""

    def __init__(self, topics: dict, brokers=(1, 2, 3), fenced=(), controller=1, exists=False, hang_s=0.0):
        self.topics, self.brokers, self.fenced = topics, brokers, fenced
        self.controller, self.exists, self.hang_s = controller, exists, hang_s
        self.created: list = []
        self.closed = 0

    def describe_topics(self, names):
        time.sleep(self.hang_s)
        (name,) = names
        if name == "forbidden":
            return [{"topic": name, "error_code": 29, "partitions": []}]
        if name not in self.topics:
            return [{"topic": name, "error_code": 3, "partitions": []}]
        return [{"topic": name, "error_code": 0, "partitions": list(reversed(self.topics[name]))}]

    def describe_cluster(self):
        return {
            "brokers": [{"broker_id": b, "is_fenced": b in self.fenced} for b in self.brokers],
            "controller_id": self.controller,
        }

    def create_topics(self, new_topics):
        if self.exists:
            raise TopicAlreadyExistsError()
        self.created.extend(new_topics)
        for t in new_topics:
            self.topics[t.name] = [part(i, leader=1, isr=[1, 2, 3]) for i in range(t.num_partitions)]

    def delete_topics(self, topics):
        missing = [t for t in topics if t not in self.topics]
        if missing:  # kafka-python raises the answer's first error
            raise UnknownTopicOrPartitionError(missing[0])
        for t in topics:
            del self.topics[t]
        return {"topics": [{"name": t, "error_code": 0, "error_message": None} for t in topics]}

    def close(self):
        self.closed += 1


def part(index, leader, isr, replicas=(1, 2, 3), epoch=0):
    return {
        "partition_index": index,
        "leader_id": leader,
        "leader_epoch": epoch,
        "replica_nodes": list(replicas),
        "isr_nodes": list(isr),
    }


class Handle(ClusterMetadata):
    def __init__(self, fake, **kwargs):
        self.fake = fake
        self.metadata = ClusterAdmin(lambda **_: fake, **kwargs)


def test_partitions_leader_isr_and_brokers_come_from_the_metadata():
    fake = FakeAdmin({"t": [part(0, leader=2, isr=[3, 2]), part(1, leader=-1, isr=[3])]}, fenced=(1,))
    h = Handle(fake)
    assert h.partitions_of("t") == [0, 1]
    assert h.leader_of("t", 0) == 2 and h.isr_of("t", 0) == [2, 3]
    # a leaderless partition still exists: its ISR is what the controller keeps
    assert h.leader_of("t", 1) == -1 and h.isr_of("t", 1) == [3]
    assert h.live_broker_ids() == [2, 3] and h.controller_id() == 1
    assert fake.closed == 7, "every read (7 here) closes its admin client"


def test_a_partition_that_does_not_exist_is_an_error_that_names_it():
    h = Handle(FakeAdmin({"t": [part(0, 1, [1, 2, 3])]}))
    assert h.partitions_of("missing") == []
    with pytest.raises(ClusterError, match="no partition t-4"):
        h.partition_info("t", 4)
    with pytest.raises(ClusterError, match=r"create_topic\('missing'\)"):
        h.leader_of("missing")


def test_a_refused_topic_is_raised_inside_the_explaining_context():
    seen = []

    class Explained:
        def __init__(self, **used):
            seen.append(used)

        def __enter__(self):
            return self

        def __exit__(self, kind, exc, tb):
            if isinstance(exc, TopicAuthorizationFailedError):
                raise PermissionError(f"not yours: {seen[-1]['topic']}") from exc
            return False

    h = Handle(FakeAdmin({}), explained=Explained)
    with pytest.raises(PermissionError, match="not yours: forbidden"):
        h.partitions_of("forbidden")


def test_create_topic_waits_for_a_full_isr_and_keeps_an_existing_topic():
    fake = FakeAdmin({})
    admin = ClusterAdmin(lambda **_: fake)
    spec = TopicSpec.of("new", 2, 3, min_insync_replicas=2, config={"retention.ms": 1000})
    assert admin.create_from(spec) == "new"
    (created,) = fake.created
    assert (created.num_partitions, created.replication_factor) == (2, 3)
    assert created.topic_configs == {"min.insync.replicas": "2", "retention.ms": "1000"}
    # exists with one replica down (out of the ISR): kept, a leader per partition is enough
    fake = FakeAdmin({"old": [part(0, leader=1, isr=[1, 2])]}, exists=True)
    assert ClusterAdmin(lambda **_: fake).create_from(TopicSpec.of("old", 1, 3, 2), timeout_s=1) == "old"


def test_a_create_whose_connection_drops_is_sent_again_and_a_refusal_is_not():
    """A broker a fault just restarted can close the admin's connection under the request (a
    retriable error): the create is sent again. An error that is not retriable is the caller's."""
    fake = FakeAdmin({})
    create, calls = fake.create_topics, []

    def dropped_once(new_topics):
        calls.append(new_topics)
        if len(calls) == 1:
            raise KafkaConnectionError("socket disconnected")
        create(new_topics)

    fake.create_topics = dropped_once
    assert ClusterAdmin(lambda **_: fake).create_from(TopicSpec.of("t", 1, 3, 2), timeout_s=5) == "t"
    assert len(calls) == 2 and len(fake.created) == 1
    fake.create_topics = lambda new: (_ for _ in ()).throw(InvalidReplicationFactorError("rf 3 > 1 broker"))
    with pytest.raises(InvalidReplicationFactorError):
        ClusterAdmin(lambda **_: fake).create_from(TopicSpec.of("u", 1, 3, 2), timeout_s=5)


def test_a_new_topic_without_a_full_isr_times_out_saying_so():
    fake = FakeAdmin({})
    fake.create_topics = lambda new: fake.topics.update({"t": [part(0, leader=1, isr=[1])]})
    with pytest.raises(ClusterError, match="no leader with a full ISR"):
        ClusterAdmin(lambda **_: fake).create_from(TopicSpec.of("t", 1, 3, 2), timeout_s=0.5)


def test_patient_reads_abandon_a_hanging_client_and_retry_then_give_up():
    fake = FakeAdmin({"t": [part(0, 1, [1])]}, hang_s=1.0)
    made = []

    def new_client(**kwargs):
        made.append(kwargs)
        return fake

    patient = ClusterAdmin(new_client, attempts=3, attempt_s=0.1)
    t0 = time.monotonic()
    with pytest.raises(ClusterError, match="unavailable after 3 attempts"):
        patient.partitions("t")
    assert time.monotonic() - t0 < 0.9, "each attempt is abandoned after attempt_s"
    assert made == [{"request_timeout_ms": 1000}] * 3
    fake.hang_s = 0.0
    assert [p["partition_index"] for p in patient.partitions("t")] == [0]
    for t in [t for t in threading.enumerate() if t.name == "course-admin-read"]:
        t.join(timeout=5)  # the abandoned ones end when their call returns
        assert not t.is_alive()


def test_attempts_must_be_positive():
    with pytest.raises(ValueError, match="attempts must be >= 1"):
        ClusterAdmin(lambda **_: None, attempts=0)


def test_delete_topic_waits_until_the_metadata_no_longer_lists_it():
    fake = FakeAdmin({"t": [part(0, 1, [1, 2, 3])]})
    h = Handle(fake)
    h.delete_topic("t")
    assert h.partitions_of("t") == []
    with pytest.raises(UnknownTopicOrPartitionError):
        h.delete_topic("t")


def test_an_admin_client_whose_bootstrap_fails_leaves_no_thread_behind():
    """kafka-python 3.0.12's KafkaAdminClient raises from a failed bootstrap with its I/O thread
    still running (measured: ``kafka-io-...`` stays); the course's AdminClient stops it."""
    import socket

    from kafka.errors import KafkaTimeoutError

    from course_lib.real.admin_client import AdminClient

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    before = set(threading.enumerate())
    with pytest.raises(KafkaTimeoutError):
        AdminClient(bootstrap_servers=f"127.0.0.1:{port}", bootstrap_timeout_ms=500)
    assert [t.name for t in threading.enumerate() if t not in before] == []
