"""AlterShareGroupOffsets and DeleteShareGroupOffsets (KIP-932, issue 39) as a cluster answers
them, through Java's Admin (``alterShareGroupOffsets``, ``deleteShareGroupOffsets``,
``listShareGroupOffsets``) and raw kafka-python requests (kafka-python 3.0.12 has no admin call
for them: the requests are built from the schemas of :mod:`course_lib.wire.apis.schemas`); run
against the wire cluster (tests/java_client/test_share_group_offsets_wire.py) and Kafka 4.4.0
(tests/real/test_share_groups_real.py) with the same expectations.

A member in a group is a raw ShareGroupHeartbeat (it stays for the session timeout, far longer
than a probe). Group names are new each run; a message naming one says ``<group>`` instead."""

from __future__ import annotations

import time
import uuid

from confluent_kafka import Producer, ShareConsumer
from kafka import KafkaAdminClient, KafkaConsumer

from course_lib.java_client import JavaAdmin
from course_lib.wire.apis.schemas import (
    AlterShareGroupOffsetsRequest,
    DeleteShareGroupOffsetsRequest,
    ShareGroupHeartbeatRequest,
)

#: the records written to partition 0 of the probes' topic
RECORDS = 5
#: where the probes move a group's start offset to
MOVED_TO = 2


def share_offsets_answers(driver, servers: str, topic: str, timeout_s: float = 30) -> dict:
    """What Java's Admin answers on ``topic`` (1 partition) with :data:`RECORDS` records."""
    producer = Producer({"bootstrap.servers": servers, "linger.ms": 0})
    for i in range(RECORDS):
        producer.produce(topic, value=f"r{i}".encode(), partition=0)
    producer.flush(30)
    admin = JavaAdmin(driver, {"bootstrap.servers": servers})
    new, busy, unknown = (f"so-{kind}-{uuid.uuid4().hex[:8]}" for kind in ("new", "busy", "none"))
    tp = (topic, 0)

    def names(outcome, group: str):
        if outcome is None:
            return None
        return (outcome.name, None if outcome.message is None else outcome.message.replace(group, "<group>"))

    def listed(group: str):
        got = admin.list_share_group_offsets([group])[group]
        return {p: (o or {}).get("startOffset") for (_, p), o in got.items()}

    def alter(group: str, offset: int, where=tp):
        return names(admin.alter_share_group_offsets(group, {where: offset})[where], group)

    def delete(group: str, topics=(topic,)):
        return {t: names(e, group) for t, e in admin.delete_share_group_offsets(group, topics).items()}

    try:
        out: dict = {"alter a new group": alter(new, 0), "listed after it": listed(new)}
        out["a member gets"] = _consumed(servers, new, topic, RECORDS, timeout_s)
        # the member's leave may still be on its way: a refusal for it is asked again
        out["alter once it left"] = _until(lambda: alter(new, MOVED_TO), lambda a: a is None or "NotEmpty" not in a[0])
        out["listed then"] = listed(new)
        out["the next member starts there"] = _consumed(servers, new, topic, RECORDS - MOVED_TO, timeout_s)
        _until(lambda: alter(new, MOVED_TO), lambda a: a is None or "NotEmpty" not in a[0])
        out["alter an unknown topic"] = alter(new, 0, ("no-such-topic", 0))
        out["alter an unknown partition"] = alter(new, 0, (topic, 7))
        out["delete"] = delete(new)
        out["listed after the delete"] = listed(new)
        out["delete again"] = delete(new)
        out["delete an unknown topic"] = delete(new, ["no-such-topic"])
        out["delete for an unknown group"] = delete(unknown)
        classic = _consumer_group(servers, topic)
        out["alter for a consumer group"] = alter(classic, 0)
        out["delete for a consumer group"] = delete(classic)
        with _member(servers, busy, topic):
            out["alter while a member is in"] = alter(busy, 0)
            out["delete while a member is in"] = delete(busy)
        return out
    finally:
        admin.close()


def raw_share_offsets_answers(servers: str, topic: str) -> dict:
    """(error code, message) of raw AlterShareGroupOffsets v0 and DeleteShareGroupOffsets v0 at the
    group's coordinator: the group level, then each partition (alter) or topic (delete)."""
    group = f"so-raw-{uuid.uuid4().hex[:8]}"
    client = KafkaAdminClient(bootstrap_servers=servers)
    try:
        node = _until(lambda: _coordinator(client, group), lambda n: n is not None)

        unknown = f"{group}-none"
        return {
            "alter": alter_offsets(client, node, group, {(topic, 0): 1, (topic, 7): 0, ("no-such-topic", 0): 0}),
            "delete": delete_offsets(client, node, group, [topic]),
            "delete again": delete_offsets(client, node, group, [topic, "no-such-topic"]),
            "delete for an unknown group": delete_offsets(
                client, _until(lambda: _coordinator(client, unknown), lambda n: n is not None), unknown, [topic]
            ),
        }
    finally:
        client.close()


def alter_offsets(client: KafkaAdminClient, node: int, group: str, offsets: dict) -> tuple:
    """AlterShareGroupOffsets v0 of ``offsets`` ({(topic, partition): start offset}) at ``node``:
    (group error code, message), then each partition's (topic, partition, code, message)."""
    Topic = AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestTopic
    Partition = Topic.AlterShareGroupOffsetsRequestPartition
    topics = [
        Topic(version=0, topic_name=t, partitions=[Partition(version=0, partition_index=p, start_offset=o)])
        for (t, p), o in offsets.items()
    ]
    got = _send(client, AlterShareGroupOffsetsRequest(version=0, group_id=group, topics=topics), node)
    rows = (
        (t.topic_name, p.partition_index, p.error_code, p.error_message) for t in got.responses for p in t.partitions
    )
    return (got.error_code, got.error_message), sorted(rows)


def delete_offsets(client: KafkaAdminClient, node: int, group: str, topics: list) -> tuple:
    """DeleteShareGroupOffsets v0 of ``topics`` at ``node``: (group error code, message - the
    group's name in it as ``<group>``), then each topic's (topic, code, message)."""
    Topic = DeleteShareGroupOffsetsRequest.DeleteShareGroupOffsetsRequestTopic
    request = DeleteShareGroupOffsetsRequest(
        version=0, group_id=group, topics=[Topic(version=0, topic_name=t) for t in topics]
    )
    got = _send(client, request, node)
    message = None if got.error_message is None else got.error_message.replace(group, "<group>")
    return (got.error_code, message), sorted((t.topic_name, t.error_code, t.error_message) for t in got.responses)


def _consumed(servers: str, group: str, topic: str, count: int, timeout_s: float) -> list[int]:
    """The offsets a new member of ``group`` gets (and accepts), once it got ``count`` (or the
    time is up)."""
    consumer = ShareConsumer({"bootstrap.servers": servers, "group.id": group})
    consumer.subscribe([topic])
    got: list[int] = []
    try:
        deadline = time.monotonic() + timeout_s
        while len(got) < count and time.monotonic() < deadline:
            got += [m.offset() for m in consumer.poll(0.2) if m.error() is None]
    finally:
        consumer.close()
    return sorted(got)


def _consumer_group(servers: str, topic: str) -> str:
    """A (classic) consumer group that read a record of ``topic`` and committed, now empty."""
    group = f"so-classic-{uuid.uuid4().hex[:8]}"
    consumer = KafkaConsumer(topic, bootstrap_servers=servers, group_id=group, auto_offset_reset="earliest")
    try:
        _until(lambda: consumer.poll(200), bool)
        consumer.commit()
    finally:
        consumer.close()
    return group


class _member:
    """A member of ``group`` subscribed to ``topic`` while the block runs (it leaves after)."""

    def __init__(self, servers: str, group: str, topic: str):
        self.client = KafkaAdminClient(bootstrap_servers=servers)
        self.group, self.topic, self.id = group, topic, uuid.uuid4().hex[:22]

    def _beat(self, epoch: int, topics):
        node = _until(lambda: _coordinator(self.client, self.group), lambda n: n is not None)
        request = ShareGroupHeartbeatRequest(
            version=1, group_id=self.group, member_id=self.id, member_epoch=epoch, subscribed_topic_names=topics
        )
        return _send(self.client, request, node)

    def __enter__(self):
        joined = _until(lambda: self._beat(0, [self.topic]), lambda r: r.error_code == 0)
        assert joined.error_code == 0, joined
        return self

    def __exit__(self, *exc):
        try:
            self._beat(-1, None)
        finally:
            self.client.close()


def _send(client: KafkaAdminClient, request, node: int):
    return client._manager.run(client._manager.send, request, node)


def _coordinator(client: KafkaAdminClient, group: str):
    """The group's coordinator, or None while there is none yet (a new cluster's coordinators load)."""
    from kafka.errors import CoordinatorNotAvailableError

    try:
        return client._manager.run(client._find_coordinator_id, group)
    except CoordinatorNotAvailableError:
        return None


def _until(ask, done, timeout_s: float = 30):
    """``ask()`` again until ``done(answer)`` (a coordinator loading, a member leaving, share state
    initializing)."""
    deadline = time.monotonic() + timeout_s
    while True:
        answer = ask()
        if done(answer) or time.monotonic() > deadline:
            return answer
        time.sleep(0.1)
