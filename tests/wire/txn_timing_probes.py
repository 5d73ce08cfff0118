"""Transactional requests right after a commit, while its markers are still to be written (Kafka's
PrepareCommit state, before CompleteCommit), through kafka-python's protocol classes on one
connection to the transaction coordinator. The transaction's one partition has one replica, on
a broker that is not the coordinator, and that broker is paused from before the commit until the probe has
asked: its markers wait for it, so every request is taken in that state, never by a race. Run
against the wire cluster (tests/wire/test_txn_right_after_commit.py) and Kafka
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


class _Txn:
    """One transactional id's raw requests to its coordinator (``ids``: its producer id and epoch)."""

    def __init__(self, bootstrap: str, txn_id: str):
        self.bootstrap, self.txn_id = bootstrap, txn_id
        self.raw, self.node = self._coordinator()
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

    def init(self) -> int:
        answer = self._ask(
            InitProducerIdRequest(transactional_id=self.txn_id, transaction_timeout_ms=60000), InitProducerIdResponse, 1
        )
        if answer.error_code == 0:
            self.ids = {"producer_id": answer.producer_id, "producer_epoch": answer.producer_epoch}
        return answer.error_code

    def add(self, topic: str) -> int:
        request = build(
            AddPartitionsToTxnRequest,
            v3_and_below_transactional_id=self.txn_id,
            v3_and_below_producer_id=self.ids["producer_id"],
            v3_and_below_producer_epoch=self.ids["producer_epoch"],
            v3_and_below_topics=[{"name": topic, "partitions": [0]}],
        )
        answer = self._ask(request, AddPartitionsToTxnResponse, 3)
        return answer.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code

    def commit(self, version: int):
        """EndTxn(commit) at ``version`` (v5: transactions v2, the answer names the bumped epoch)."""
        request = EndTxnRequest(transactional_id=self.txn_id, committed=True, **self.ids)
        return self._ask(request, EndTxnResponse, version)

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
    """Per EndTxn version (4: transactions v1, 5: v2): commit with the partition's broker paused,
    then ask AddPartitionsToTxn (with the epoch the commit was sent with), the same EndTxn again,
    InitProducerId; resume the broker and wait until the partition can be added again."""
    bootstrap = cluster.bootstrap_servers
    txn = _Txn(bootstrap, f"after-{uuid.uuid4().hex[:8]}")
    held, topic = _one_replica_topic(bootstrap, txn.node)
    out: dict = {}
    try:
        out["init"] = txn.until(txn.init)
        for version in (4, 5):
            out[f"v{version} added"] = txn.until(lambda: txn.add(topic))
            sent_with = dict(txn.ids)
            cluster.pause(held)
            try:
                ended = txn.commit(version)
                txn.ids = sent_with
                out[f"v{version} commit"] = ended.error_code
                out[f"v{version} then AddPartitionsToTxn"] = txn.add(topic)
                out[f"v{version} then the same commit"] = txn.commit(version).error_code
                out[f"v{version} then InitProducerId"] = txn.init()
            finally:
                cluster.resume(held)
            out[f"v{version} InitProducerId once written"] = txn.until(txn.init)
        out["added at last"] = txn.until(lambda: txn.add(topic))
        return out
    finally:
        txn.close()
