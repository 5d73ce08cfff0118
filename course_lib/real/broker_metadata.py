"""Each broker's own view of a topic, asked of that broker alone (Metadata v1 on a socket of its
own, kafka-python's ``kafka.protocol`` classes).

Why: a KRaft broker learns of a new topic when it replays the metadata log, each broker at its own
pace. The admin's answer comes from one broker, so it can name the topic's leaders before the
others know the topic - a group coordinator among them. A member that joins a consumer group in
that gap gets an empty assignment, and the topic's arrival then costs the group one more epoch
(measured on Kafka 4.3.1: member epochs 4 and 4 instead of 3 and 3). So a new topic counts as
created once every running broker knows its leaders.
"""

from __future__ import annotations

import socket
import struct
import time

#: how long one broker may take to answer one Metadata request
ANSWER_TIMEOUT_S = 5.0


def leaders_seen(address: str, topic: str) -> list[int]:
    """The leader of each partition of ``topic`` as the broker at ``address`` (``host:port``) sees
    it, in partition order: ``[]`` while it does not know the topic, -1 for a partition without one."""
    from kafka.protocol.metadata import MetadataRequest, MetadataResponse

    answer = _ask(address, MetadataRequest(topics=[topic]), MetadataResponse, version=1)
    partitions = [p for t in answer.topics if t.name == topic and t.error_code == 0 for p in t.partitions]
    return [p.leader_id for p in sorted(partitions, key=lambda p: p.partition_index)]


def serves_as_leader(address: str, topic: str, partition: int = 0) -> bool:
    """Whether the broker at ``address`` answers a consumer's ListOffsets for ``topic``-``partition``,
    which only the partition's leader does.

    Why not Metadata alone: a KRaft broker updates the metadata it hands out before its replica
    manager becomes the new leader (both from one metadata image, in that order), so for a moment
    every broker names the new leader and the new leader still refuses a produce with
    NOT_LEADER_OR_FOLLOWER - a retries=0 producer then fails, more often the busier the machine."""
    from kafka.protocol.consumer.offsets import ListOffsetsRequest, ListOffsetsResponse

    lookup = ListOffsetsRequest.ListOffsetsTopic.ListOffsetsPartition(partition_index=partition, timestamp=-1)
    request = ListOffsetsRequest(
        replica_id=-1, topics=[ListOffsetsRequest.ListOffsetsTopic(name=topic, partitions=[lookup])]
    )
    answer = _ask(address, request, ListOffsetsResponse, version=1)
    return [p.error_code for t in answer.topics for p in t.partitions] == [0]


def _ask(address: str, request, response_type, version: int):
    """One request on a socket of its own, its decoded answer."""
    host, port = address.rsplit(":", 1)
    request.API_VERSION = version
    request.with_header(correlation_id=1, client_id="course-metadata-probe")
    with socket.create_connection((host, int(port)), timeout=ANSWER_TIMEOUT_S) as sock:
        sock.sendall(bytes(request.encode(header=True, framed=True)))
        size = struct.unpack(">i", _exactly(sock, 4))[0]
        return response_type.decode(_exactly(sock, size), version=version, header=True)


def wait_known_everywhere(addresses: list[str], topic: str, partitions: int | None, timeout_s: float) -> None:
    """Return once every broker at ``addresses`` names a leader for each of ``topic``'s partitions
    (``partitions`` of them; None: as many as it lists); ``TimeoutError`` saying which broker did
    not, otherwise."""
    deadline = time.monotonic() + timeout_s
    waiting = list(addresses)
    while waiting:
        seen = {a: leaders_seen(a, topic) for a in waiting}
        waiting = [a for a, leaders in seen.items() if not _complete(leaders, partitions)]
        if waiting and time.monotonic() > deadline:
            raise TimeoutError(
                f"topic {topic!r}: after {timeout_s} s the brokers at {waiting} still do not know its leaders "
                f"({ {a: seen[a] for a in waiting} }); are they running and caught up with the controller?"
            )
        if waiting:
            time.sleep(0.05)


def wait_for_new_leader(addresses: list[str], topic: str, old: int, timeout_s: float, partition: int = 0) -> int:
    """The new leader of ``topic``-``partition``, once every broker at ``addresses`` names the same
    one, not ``old``, and it serves the partition (:func:`serves_as_leader`): a client then meets
    the election's outcome, not the brokers' race to apply it. ``TimeoutError`` with what each
    broker said, otherwise."""
    deadline = time.monotonic() + timeout_s
    while True:
        seen = {a: (leaders_seen(a, topic)[partition:] or [-1])[0] for a in addresses}
        named = set(seen.values())
        if len(named) == 1 and not named & {old, -1}:
            if any(serves_as_leader(a, topic, partition) for a in addresses):
                return named.pop()
        if time.monotonic() > deadline:
            raise TimeoutError(f"after {timeout_s} s the brokers disagree on {topic}-{partition}'s leader: {seen}")
        time.sleep(0.05)


def _complete(leaders: list[int], partitions: int | None) -> bool:
    return bool(leaders) and (partitions is None or len(leaders) == partitions) and min(leaders) >= 0


def _exactly(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("the broker closed the connection")
        buf += chunk
    return buf
