"""Share groups under ACLs (KIP-932's APIs as KafkaApis authorizes them), through kafka-python's
protocol machinery (raw requests on a logged-in admin connection) and the Java client's Admin; run
against the wire cluster (tests/wire/test_acls.py) and Kafka (tests/real/test_acls_real.py) with
the workshop's authorizer settings.

``ann`` may READ the group ``sh-g`` and the topic ``sh-t``, nothing on ``sh-other``; ``bob``
nothing at all. The super user's member of ``sh-g`` subscribes to both topics, so the group has
share state on both. What is compared: error codes (and messages where Kafka sets them), never
records, whose arrival is timing.
"""

from __future__ import annotations

import time
import uuid

from kafka import KafkaAdminClient
from kafka.admin import ACLOperation, ACLResourcePatternType, NewTopic, ResourceType

from course_lib.wire.apis.schemas import (
    DescribeShareGroupOffsetsRequest,
    ShareAcknowledgeRequest,
    ShareFetchRequest,
    ShareGroupHeartbeatRequest,
)

from .acl_probes import ADMIN, _allow, _everywhere, _failed
from .share_group_offsets_probes import _until, alter_offsets, delete_offsets

P = "sh-"
GROUP, TOPIC, OTHER = f"{P}g", f"{P}t", f"{P}other"
#: the errors a coordinator answers while it loads or moves (asked again)
_RETRIABLE = {14, 15, 16}
#: AcknowledgeType ACCEPT
ACCEPT = 1


def _send(client: KafkaAdminClient, request, node: int):
    return client._manager.run(client._manager.send, request, node)


def _member() -> str:
    return uuid.uuid4().hex[:22]


def _heartbeat(client, node: int, member: str, epoch: int, topics: list | None):
    request = ShareGroupHeartbeatRequest(
        version=1, group_id=GROUP, member_id=member, member_epoch=epoch, subscribed_topic_names=topics
    )
    return _send(client, request, node)


def _fetch(client, node: int, ids: dict, group: str, member: str, epoch: int, acks=None, topics=(TOPIC, OTHER)):
    """ShareFetch v1 of ``topics``' partition 0 (``acks``: topic -> offsets to ACCEPT)."""
    Topic = ShareFetchRequest.FetchTopic
    Partition = Topic.FetchPartition
    Batch = Partition.AcknowledgementBatch
    acks = acks or {}
    fetched = [
        Topic(
            version=1,
            topic_id=ids[t],
            partitions=[
                Partition(
                    version=1,
                    partition_index=0,
                    acknowledgement_batches=[
                        Batch(version=1, first_offset=o, last_offset=o, acknowledge_types=[ACCEPT])
                        for o in acks.get(t, ())
                    ],
                )
            ],
        )
        for t in topics
    ]
    request = ShareFetchRequest(
        version=1,
        group_id=group,
        member_id=member,
        share_session_epoch=epoch,
        max_wait_ms=0,
        min_bytes=1,
        max_bytes=1 << 20,
        max_records=5,
        batch_size=5,
        topics=fetched if epoch == 0 or acks else [],
        forgotten_topics_data=[],
    )
    return _partitions(_send(client, request, node), ids, "acknowledge_error_code")


def _acknowledge(client, node: int, ids: dict, group: str, member: str, epoch: int, acks: dict):
    Topic = ShareAcknowledgeRequest.AcknowledgeTopic
    Partition = Topic.AcknowledgePartition
    Batch = Partition.AcknowledgementBatch
    request = ShareAcknowledgeRequest(
        version=1,
        group_id=group,
        member_id=member,
        share_session_epoch=epoch,
        topics=[
            Topic(
                version=1,
                topic_id=ids[t],
                partitions=[
                    Partition(
                        version=1,
                        partition_index=0,
                        acknowledgement_batches=[
                            Batch(version=1, first_offset=o, last_offset=o, acknowledge_types=[ACCEPT]) for o in offsets
                        ],
                    )
                ],
            )
            for t, offsets in acks.items()
        ],
    )
    return _partitions(_send(client, request, node), ids)


def _partitions(answer, ids: dict, *ack_fields: str):
    """``(error, message, lock ms)`` of a refused request; else each partition that answered an
    error: topic -> (error, [acknowledge error])."""
    if answer.error_code:
        return (answer.error_code, answer.error_message, answer.acquisition_lock_timeout_ms)
    names = {v: k for k, v in ids.items()}
    out = {}
    for t in answer.responses:
        for p in t.partitions:
            codes = (p.error_code, *(getattr(p, f) for f in ack_fields))
            if any(codes):
                out[names.get(t.topic_id, str(t.topic_id))] = codes
    return out


def _offsets(client, node: int, topics: list | None):
    """DescribeShareGroupOffsets v1 of ``sh-g``: ``topics`` named (partition 0 each) or all (None)."""
    Group = DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestGroup
    Topic = Group.DescribeShareGroupOffsetsRequestTopic
    named = None if topics is None else [Topic(version=1, topic_name=t, partitions=[0]) for t in topics]
    request = DescribeShareGroupOffsetsRequest(version=1, groups=[Group(version=1, group_id=GROUP, topics=named)])
    group = _send(client, request, node).groups[0]
    return (
        group.error_code,
        group.error_message,
        sorted(
            (t.topic_name, t.topic_id is None, p.error_code, p.error_message, p.start_offset, p.lag)
            if p.error_code
            else (t.topic_name, p.error_code)
            for t in group.topics
            for p in t.partitions
        ),
    )


def _coordinator(admin, timeout_s: float = 30) -> int:
    """The group's coordinator, once there is one (a new cluster's group coordinators load)."""
    from kafka.errors import CoordinatorNotAvailableError

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return admin._manager.run(admin._find_coordinator_id, GROUP)
        except CoordinatorNotAvailableError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def acl_shares(bootstrap: str, login, java_admin=None) -> dict:
    """``login(user)``: kafka-python keyword arguments that log ``user`` in; ``java_admin(user)``
    (if given): a Java Admin logged in as ``user``, whose ``listShareGroupOffsets`` ann (who sees
    only the topic she may DESCRIBE) and bob (refused by FindCoordinator first) call too."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, **login(ADMIN))
    ann = KafkaAdminClient(bootstrap_servers=bootstrap, **login("ann"))
    bob = KafkaAdminClient(bootstrap_servers=bootstrap, **login("bob"))
    try:
        admin.create_topics([NewTopic(t, 1, 3) for t in (TOPIC, OTHER)])
        before = _everywhere(admin)
        grants = [
            _allow("ann", ACLOperation.READ, ResourceType.GROUP, GROUP),
            _allow("ann", ACLOperation.READ, ResourceType.TOPIC, TOPIC, ACLResourcePatternType.LITERAL),
        ]
        refused = _failed(admin.create_acls(grants))
        mine = _everywhere(admin, before)
        described = {t["name"]: t for t in admin.describe_topics([TOPIC, OTHER])}
        ids = {t: uuid.UUID(described[t]["topic_id"]) for t in (TOPIC, OTHER)}
        coordinator = _coordinator(admin)

        # the super user's member subscribes to both topics: the group gets share state on both
        owner = _member()
        _until(
            lambda: _heartbeat(admin, coordinator, owner, 0, [TOPIC, OTHER]), lambda a: a.error_code not in _RETRIABLE
        )
        leaders = {t: described[t]["partitions"][0]["leader_id"] for t in (TOPIC, OTHER)}

        def state():
            """The super user fetches from both topics (a share-partition's state is written on
            Kafka once the heartbeat initialized it, on the wire once a fetch opened it)."""
            for topic, node in leaders.items():
                _fetch(admin, node, ids, GROUP, owner, 0, topics=[topic])
            return _offsets(admin, coordinator, None)

        initialized = _until(state, lambda a: [t for t, _ in a[2]] == sorted([OTHER, TOPIC]))
        member = _member()
        out: dict = {
            "refused": refused,
            "state on both topics": initialized,
            "ann joins on her topic": _heartbeat(ann, coordinator, member, 0, [TOPIC]).error_code,
            "ann joins on the other": _heartbeat(ann, coordinator, _member(), 0, [TOPIC, OTHER]).error_code,
            "ann joins another group": _heartbeat_other_group(ann, coordinator),
            "bob fetches": _fetch(bob, leaders[TOPIC], ids, GROUP, member, 0),
            "ann fetches in another group": _fetch(ann, leaders[TOPIC], ids, f"{P}h", member, 0),
            "ann's member id too long": _fetch(ann, leaders[TOPIC], ids, GROUP, "m" * 37, 0),
            "ann fetches both": _fetch(ann, leaders[TOPIC], ids, GROUP, member, 0),
            "ann acknowledges in a fetch": _fetch(ann, leaders[TOPIC], ids, GROUP, member, 1, {OTHER: [0]}),
            "ann acknowledges": _acknowledge(ann, leaders[TOPIC], ids, GROUP, member, 2, {OTHER: [0]}),
            "bob acknowledges": _acknowledge(bob, leaders[TOPIC], ids, GROUP, member, 3, {OTHER: [0]}),
            "ann describes all offsets": _offsets(ann, coordinator, None),
            "ann describes both topics' offsets": _offsets(ann, coordinator, [TOPIC, OTHER]),
            "bob describes offsets": _offsets(bob, coordinator, None),
            # AlterShareGroupOffsets: READ on the group, then on each topic; DeleteShareGroupOffsets:
            # DELETE on the group. A group with members is refused whole.
            "bob alters offsets": alter_offsets(bob, coordinator, GROUP, {(TOPIC, 0): 0}),
            "ann alters offsets of a group with members": alter_offsets(
                ann, coordinator, GROUP, {(TOPIC, 0): 0, (OTHER, 0): 0}
            ),
            "ann deletes offsets": delete_offsets(ann, coordinator, GROUP, [TOPIC]),
        }
        if java_admin is not None:
            out["java"] = {user: _java_offsets(java_admin, user) for user in ("ann", "bob")}
        _heartbeat(admin, coordinator, owner, -1, None)
        _heartbeat(ann, coordinator, member, -1, None)
        out["ann alters offsets once all left"] = alter_offsets(ann, coordinator, GROUP, {(TOPIC, 0): 0, (OTHER, 0): 0})
        removed = admin.delete_acls(grants)
        out["removed"] = sum(len(acls) for _f, acls, _err in removed)
        _everywhere(admin, mine)
        admin.delete_topics([TOPIC, OTHER])
        return out
    finally:
        for client in (admin, ann, bob):
            client.close()


def _heartbeat_other_group(client, node: int) -> int:
    request = ShareGroupHeartbeatRequest(
        version=1, group_id=f"{P}h", member_id=_member(), member_epoch=0, subscribed_topic_names=[TOPIC]
    )
    return _send(client, request, node).error_code


def java_admins(driver, bootstrap: str, passwords: dict):
    """``user`` -> a Java Admin logged in as ``user`` (SCRAM-SHA-512), on ``driver``."""
    from course_lib.java_client import JavaAdmin

    def admin(user: str):
        jaas = f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{user}" password="{passwords[user]}";'
        login = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": jaas}
        return JavaAdmin(driver, {"bootstrap.servers": bootstrap, **login})

    return admin


def _java_offsets(java_admin, user: str):
    """``Admin.listShareGroupOffsets`` of ``sh-g`` by ``user`` (``java_admin(user)``: a logged-in
    Java Admin): the topics it lists, or the exception's simple class name."""
    client = java_admin(user)
    try:
        got = client.list_share_group_offsets([GROUP])[GROUP]
    finally:
        client.close(timeout=5)
    return sorted({t for t, _p in got}) if isinstance(got, dict) else got.java_class.rsplit(".", 1)[-1]


__all__ = ["acl_shares", "java_admins"]
