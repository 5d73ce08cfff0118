"""FindCoordinator's answer field by field, through kafka-python's protocol classes on logged-in
connections: the coordinator found, or refused by the ACLs, at version 4 (one row per key, whose
``error_message`` Kafka leaves at the schema's default, an empty string) and at version 3 (one
answer, whose message is ``Errors.message()``: "NONE" when found). Run against the wire cluster
(tests/wire/test_acls.py) and Kafka (tests/real/test_acls_real.py) with the workshop's authorizer
settings; ``ann`` may READ the group ``fc-g`` (which implies DESCRIBE), nothing else.
"""

from __future__ import annotations

import time

from kafka import KafkaAdminClient
from kafka.admin import ACLOperation, ResourceType
from kafka.protocol.metadata import FindCoordinatorRequest

from .acl_probes import ADMIN, _allow, _everywhere, _failed

GROUP, TXN = "fc-g", "fc-tx"
#: COORDINATOR_NOT_AVAILABLE: a new cluster's coordinators are still loading (asked again)
_LOADING = 15


def _ask(client: KafkaAdminClient, version: int, key_type: int, keys: list, timeout_s: float = 30):
    """The answer's rows: (key, error code, error message, found a node) per key (v4) or the one
    answer (v3, key None), once no coordinator is loading any more."""
    deadline = time.monotonic() + timeout_s
    while True:
        if version >= 4:
            request = FindCoordinatorRequest(version=version, key_type=key_type, coordinator_keys=keys)
        else:
            request = FindCoordinatorRequest(version=version, key=keys[0], key_type=key_type)
        answer = client._manager.run(client._manager.send, request)
        rows = answer.coordinators if version >= 4 else [answer]
        out = [(getattr(r, "key", None), r.error_code, r.error_message, r.node_id >= 0) for r in rows]
        if all(r[1] != _LOADING for r in out) or time.monotonic() > deadline:
            return out
        time.sleep(0.1)


def find_coordinator_answers(bootstrap: str, login) -> dict:
    """``login(user)``: kafka-python keyword arguments that log ``user`` in."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, **login(ADMIN))
    ann = KafkaAdminClient(bootstrap_servers=bootstrap, **login("ann"))
    try:
        before = _everywhere(admin)
        grants = [_allow("ann", ACLOperation.READ, ResourceType.GROUP, GROUP)]
        refused = _failed(admin.create_acls(grants))
        mine = _everywhere(admin, before)
        out = {
            "refused": refused,
            "v4 groups": _ask(ann, 4, 0, [GROUP, "fc-other"]),
            "v4 transactional ids": _ask(ann, 4, 1, [TXN]),
            "v4 by the super user": _ask(admin, 4, 1, [TXN]),
            "v3 found": _ask(ann, 3, 0, [GROUP]),
            "v3 refused": _ask(ann, 3, 0, ["fc-other"]),
            "v3 transactional id refused": _ask(ann, 3, 1, [TXN]),
        }
        removed = admin.delete_acls(grants)
        out["removed"] = sum(len(acls) for _f, acls, _err in removed)
        _everywhere(admin, mine)
        return out
    finally:
        ann.close()
        admin.close()


__all__ = ["find_coordinator_answers"]
