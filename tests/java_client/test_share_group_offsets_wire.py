"""AlterShareGroupOffsets and DeleteShareGroupOffsets (issue 39) on the wire cluster, through
Java's Admin and raw kafka-python requests (tests/wire/share_group_offsets_probes.py), answered as
Kafka 4.4.0 answers them: tests/real/test_share_groups_real.py runs the same probes on Kafka with
these expectations. Before the wire had APIs 91 and 92, Java's Admin failed with
``UnsupportedVersionException: The node does not support ALTER_SHARE_GROUP_OFFSETS``."""

import pytest
from kafka.protocol.api_key import ApiKey

from tests.wire.conftest import record_versions
from tests.wire.share_group_offsets_probes import MOVED_TO, RECORDS, raw_share_offsets_answers, share_offsets_answers

_UNKNOWN = ("UnknownTopicOrPartitionException", "This server does not host this topic-partition.")
_NOT_EMPTY = ("GroupNotEmptyException", "The group is not empty.")
_NOT_SHARE = ("GroupIdNotFoundException", "Group <group> is not a share group.")


def java_expected(topic: str) -> dict:
    """What :func:`share_offsets_answers` gives on ``topic``: an alter creates a group and its
    share state (the start offset listed at once); its next member starts there, as the leader
    read the state again; a group with a member, or of another kind, is refused; deleting
    forgets the state, and needs the group."""
    return {
        "alter a new group": None,
        "listed after it": {0: 0},
        "a member gets": list(range(RECORDS)),
        "alter once it left": None,
        "listed then": {0: MOVED_TO},
        "the next member starts there": list(range(MOVED_TO, RECORDS)),
        "alter an unknown topic": _UNKNOWN,
        "alter an unknown partition": _UNKNOWN,
        "delete": {topic: None},
        "listed after the delete": {},
        "delete again": {topic: ("UnknownTopicOrPartitionException", "There is no offset information to delete.")},
        "delete an unknown topic": {"no-such-topic": _UNKNOWN},
        "delete for an unknown group": {topic: ("GroupIdNotFoundException", "Group <group> not found.")},
        "alter for a consumer group": _NOT_SHARE,
        "delete for a consumer group": {topic: _NOT_SHARE},
        "alter while a member is in": _NOT_EMPTY,
        "delete while a member is in": {topic: _NOT_EMPTY},
    }


def raw_expected(topic: str) -> dict:
    """What :func:`raw_share_offsets_answers` gives on ``topic``: (group error, message), then the
    partitions' (alter) or topics' (delete) (error code, message)."""
    unknown = "This server does not host this topic-partition."
    return {
        "alter": ((0, None), [("no-such-topic", 0, 3, unknown), (topic, 0, 0, None), (topic, 7, 3, unknown)]),
        "delete": ((0, None), [(topic, 0, None)]),
        "delete again": (
            (0, None),
            [("no-such-topic", 3, unknown), (topic, 3, "There is no offset information to delete.")],
        ),
        "delete for an unknown group": ((69, "Group <group> not found."), []),
    }


@pytest.mark.timeout(120)
def test_java_admin_alters_and_deletes_share_group_offsets_on_the_wire(driver, wire_cluster, monkeypatch):
    topic = wire_cluster.create_topic("share-offsets", partitions=1)
    seen = record_versions(monkeypatch)
    assert share_offsets_answers(driver, wire_cluster.bootstrap_servers, topic) == java_expected(topic)
    assert {ApiKey.AlterShareGroupOffsets, ApiKey.DeleteShareGroupOffsets} <= set(seen)


@pytest.mark.timeout(60)
def test_raw_share_group_offset_requests_on_the_wire(wire_cluster):
    topic = wire_cluster.create_topic("share-offsets-raw", partitions=1)
    assert raw_share_offsets_answers(wire_cluster.bootstrap_servers, topic) == raw_expected(topic)
