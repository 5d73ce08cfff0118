"""The share group experiments moved to course_lib/share_group_experiments.py (notebook 09's
protocol matrix runs them too); the tests keep importing them by this name. The member-epoch probe
stays here: it speaks raw requests through tests/wire/client_probes."""

import time
import uuid

from course_lib.share_group_experiments import *  # noqa: F403


#: the member epochs a ShareGroupHeartbeat answers, measured on Kafka 4.3.1
#: (:func:`heartbeat_epochs`): a new group starts at epoch 1 (as consumer groups since
#: KAFKA-20268), so its first member joins at 2 - with nothing, the partition's share state not
#: yet initialized - and gets the partition at 3, once it is; every join and leave bumps the epoch
EPOCHS = {
    "first_joins": (2, []),
    "first_assigned": (3, [0]),
    "second_assigned": (4, [0]),
    "first_after_second": 4,
    "first_leaves": -1,
    "second_after_leave": 5,
    "first_rejoins_assigned": (6, [0]),
}


def heartbeat_epochs(servers: str, topic: str, group: str, timeout_s: float = 30) -> dict:
    """Two members of ``group``, new, on ``topic`` (one partition), by raw ShareGroupHeartbeat v1
    requests to the group's coordinator: A joins, B joins, A leaves and rejoins; then both leave.
    The group's partition is then initialized: members joining later get it at once. Each "assigned"
    step heartbeats until the member has the partition (Kafka assigns it once initialized, and
    4.3.1 batches assignments, ``group.share.assignment.interval.ms``: a member may first get the
    previous epoch and nothing, and B's epoch may move one heartbeat after A left)."""
    from kafka.protocol.metadata import MetadataRequest, MetadataResponse

    from course_lib.wire.apis.schemas import ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse
    from tests.wire.client_probes import _coordinator

    members = {name: uuid.uuid4().hex[:22] for name in "AB"}
    epochs = dict.fromkeys(members, 0)
    assigned: dict = dict.fromkeys(members, [])
    raw = [_coordinator(servers, group, 0)]

    def ask(request, response):
        """``request`` to the coordinator until it is loaded and still the coordinator."""
        deadline = time.monotonic() + timeout_s
        while True:
            answer = response.decode(raw[0].request(request, 1), version=1, header=True)
            errors = {getattr(answer, "error_code", 0)} | {t.error_code for t in getattr(answer, "topics", ())}
            if not errors & {3, 5, 14, 15, 16} or time.monotonic() > deadline:
                return answer
            if 16 in errors:  # NOT_COORDINATOR: a new cluster's coordinator moved
                raw[0].close()
                raw[0] = _coordinator(servers, group, 0)
            time.sleep(0.1)

    def heartbeat(name: str, epoch: int | None = None) -> int:
        joining = epoch == 0 or (epoch is None and epochs[name] == 0)
        req = ShareGroupHeartbeatRequest(
            version=1,
            group_id=group,
            member_id=members[name],
            member_epoch=epochs[name] if epoch is None else epoch,
            rack_id=None,
            subscribed_topic_names=[topic] if joining else None,
        )
        answer = ask(req, ShareGroupHeartbeatResponse)
        assert answer.error_code == 0, (name, answer)
        epochs[name] = max(answer.member_epoch, 0)
        if answer.assignment is not None:  # None: unchanged
            assigned[name] = sorted(p for t in answer.assignment.topic_partitions for p in t.partitions)
        return answer.member_epoch

    def until(name: str, done) -> None:
        deadline = time.monotonic() + timeout_s
        while not done():
            assert time.monotonic() < deadline, f"{name}: not within {timeout_s} s: {epochs} {assigned}"
            time.sleep(0.1)  # the coordinator's initialization (or its assignment batch) runs meanwhile
            heartbeat(name)

    def until_assigned(name: str) -> tuple:
        until(name, lambda: bool(assigned[name]))
        return (epochs[name], assigned[name])

    try:
        # a topic the coordinator does not know yet would cost the first member an epoch more
        ask(MetadataRequest(topics=[topic]), MetadataResponse)
        out: dict = {"first_joins": (heartbeat("A"), list(assigned["A"]))}
        out["first_assigned"] = until_assigned("A")
        heartbeat("B")
        out["second_assigned"] = until_assigned("B")
        out["first_after_second"] = heartbeat("A")
        out["first_leaves"] = heartbeat("A", -1)
        before = epochs["B"]
        until("B", lambda: epochs["B"] != before)  # at once, or after Kafka's assignment batch
        out["second_after_leave"] = epochs["B"]
        assigned["A"] = []
        heartbeat("A", 0)
        out["first_rejoins_assigned"] = until_assigned("A")
        heartbeat("A", -1)
        heartbeat("B", -1)
        return out
    finally:
        raw[0].close()
