"""Transactional requests right after a commit, while its markers are still to be written (Kafka's
PrepareCommit state, pending CompleteCommit), through kafka-python's protocol classes on one
connection to the transaction coordinator. The transaction's one partition has one replica, on
a broker that is not the coordinator, paused from before the commit until the probe has its
answers; the commit and the requests after it are written in one go, so each is taken right
after the one before is answered. Either alone leaves a race: without the pause the wire
cluster may finish the markers first; without the pipelining Kafka may (once the paused broker
is fenced it completes the commit without that partition's marker). Run against the wire
cluster (tests/wire/test_txn_right_after_commit.py) and Kafka
(tests/real/test_txn_right_after_commit_real.py): ``cluster`` is either (its pause and resume).
"""

from __future__ import annotations

import time
import uuid

from kafka import KafkaAdminClient
from kafka.admin import NewTopic
from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse
from kafka.protocol.producer import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    EndTxnRequest,
    EndTxnResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
)

from course_lib.wire.apis.common import build

from .client_probes import _until_ok, connect

#: CONCURRENT_TRANSACTIONS
CONCURRENT = 51
#: looks per EndTxn version (each a few seconds: the paused broker is fenced first)
ATTEMPTS = 6


def code_of(answer) -> int:
    """An answer's error code (AddPartitionsToTxn v3: its one partition's)."""
    if hasattr(answer, "results_by_topic_v3_and_below"):
        return answer.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code
    return answer.error_code


class _Txn:
    """One transactional id's raw requests to its coordinator (``ids``: its producer id and epoch)."""

    def __init__(self, bootstrap: str, txn_id: str):
        self.bootstrap, self.txn_id = bootstrap, txn_id
        self.raw, self.node = self._coordinator()
        # a commit waits until its decision is replicated: with a follower paused, until Kafka
        # has fenced it and shrunk the ISR (broker.session.timeout.ms, replica.lag.time.max.ms)
        self.raw.sock.settimeout(60)
        self.ids: dict = {}

    def _coordinator(self):
        host, port = self.bootstrap.split(",")[0].rsplit(":", 1)
        first = connect(host, int(port))
        try:
            request = FindCoordinatorRequest(key=self.txn_id, key_type=1)
            answer = _until_ok(
                lambda: FindCoordinatorResponse.decode(first.request(request, 1), version=1, header=True),
                "FindCoordinator",
            )
            assert answer.error_code == 0, answer
            return connect(answer.host, answer.port), answer.node_id
        finally:
            first.close()

    def _ask(self, request, response, version: int):
        return response.decode(self.raw.request(request, version), version=version, header=True)

    def together(self, *asks) -> list:
        """``(request, response class, version)`` each, written in one go: the broker takes each
        right after answering the one before (Kafka reads a connection's requests in order)."""
        frames = b""
        for request, _cls, version in asks:
            self.raw.corr += 1
            request.API_VERSION = version
            request.with_header(correlation_id=self.raw.corr, client_id=self.raw.client_id)
            frames += bytes(request.encode(header=True, framed=True))
        self.raw.sock.sendall(frames)
        return [cls.decode(self.raw.read_frame(), version=v, header=True) for _r, cls, v in asks]

    def init_request(self):
        request = InitProducerIdRequest(transactional_id=self.txn_id, transaction_timeout_ms=60000)
        return request, InitProducerIdResponse, 1

    def add_request(self, topic: str):
        request = build(
            AddPartitionsToTxnRequest,
            v3_and_below_transactional_id=self.txn_id,
            v3_and_below_producer_id=self.ids["producer_id"],
            v3_and_below_producer_epoch=self.ids["producer_epoch"],
            v3_and_below_topics=[{"name": topic, "partitions": [0]}],
        )
        return request, AddPartitionsToTxnResponse, 3

    def commit_request(self, version: int):
        """EndTxn(commit) at ``version`` (v5: transactions v2, the answer names the bumped epoch)."""
        return EndTxnRequest(transactional_id=self.txn_id, committed=True, **self.ids), EndTxnResponse, version

    def init(self) -> int:
        answer = self._ask(*self.init_request())
        if answer.error_code == 0:
            self.ids = {"producer_id": answer.producer_id, "producer_epoch": answer.producer_epoch}
        return answer.error_code

    def add(self, topic: str) -> int:
        return code_of(self._ask(*self.add_request(topic)))

    def until(self, ask, timeout_s: float = 60) -> int:
        """``ask()`` again while it answers a coordinator's retriable error (14, 15, 51)."""
        deadline = time.monotonic() + timeout_s
        while True:
            got = ask()
            if got not in (14, 15, CONCURRENT) or time.monotonic() > deadline:
                return got
            time.sleep(0.05)

    def close(self) -> None:
        self.raw.close()


def _one_replica_topic(bootstrap: str, coordinator: int) -> tuple[int, str]:
    """``(broker, topic)``: a new topic of one replica (min ISR 1, or its markers could never be
    written) on a broker that is not ``coordinator`` - created again until one is placed so
    (CreateTopics' replica assignments are not taken by the wire cluster yet)."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        while True:
            topic = f"after-{uuid.uuid4().hex[:8]}"
            admin.create_topics([NewTopic(topic, 1, 1, topic_configs={"min.insync.replicas": "1"})])
            leader = _until_leader(admin, topic)
            if leader != coordinator:
                return leader, topic
    finally:
        admin.close()


def _until_leader(admin, topic: str, timeout_s: float = 30) -> int:
    deadline = time.monotonic() + timeout_s
    while True:
        described = admin.describe_topics([topic])[0]
        leaders = [p["leader_id"] for p in described["partitions"]]
        if (leaders and leaders[0] >= 0) or time.monotonic() > deadline:
            return leaders[0] if leaders else -1
        time.sleep(0.05)


def right_after_commit(cluster) -> dict:
    """Per EndTxn version (4: transactions v1, 5: v2): with the partition's broker paused, commit
    and, written with it, AddPartitionsToTxn (with the epoch the commit was sent with), the same
    EndTxn again and InitProducerId; resume the broker and wait until the commit is complete."""
    bootstrap = cluster.bootstrap_servers
    txn = _Txn(bootstrap, f"after-{uuid.uuid4().hex[:8]}")
    held, topic = _one_replica_topic(bootstrap, txn.node)
    out: dict = {}
    try:
        out["init"] = txn.until(txn.init)
        for version in (4, 5):
            for _attempt in range(ATTEMPTS):
                out[f"v{version} added"] = txn.until(lambda: txn.add(topic))
                cluster.pause(held)
                try:
                    # written together: each is taken right after the one before is answered, so
                    # none waits for the broker to be fenced (Kafka then completes without that marker)
                    answers = txn.together(
                        txn.commit_request(version),
                        txn.add_request(topic),  # with the epoch the commit was sent with
                        txn.commit_request(version),  # the same commit again
                        txn.init_request(),
                    )
                finally:
                    cluster.resume(held)
                cases = ("commit", "then AddPartitionsToTxn", "then the same commit", "then InitProducerId")
                out.update({f"v{version} {case}": code_of(a) for case, a in zip(cases, answers)})
                out[f"v{version} InitProducerId once written"] = txn.until(txn.init)
                if code_of(answers[0]) == 0 and code_of(answers[-1]) == CONCURRENT:
                    break
                # Kafka fences the paused broker (broker.session.timeout.ms) and then completes the
                # commit without that partition's marker: on a loaded machine that can come before
                # the last request is read (it then finds no pending commit), or the commit itself
                # times out writing its decision (COORDINATOR_NOT_AVAILABLE). A pending commit only
                # ever ends, so when the last request still saw it every one before did too;
                # otherwise look again - a cluster that never holds them fails after ATTEMPTS looks
        out["added at last"] = txn.until(lambda: txn.add(topic))
        return out
    finally:
        txn.close()
