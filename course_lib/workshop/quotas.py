"""Per-user client quotas (KIP-546's AlterClientQuotas / DescribeClientQuotas) over kafka-python.

kafka-python 3.0.12 has the protocol messages but no admin method for them, so the requests go
through the admin client's connection manager (``admin._manager``), as its own methods do. A
broker over a quota does not fail the client: it delays its answer (``throttle_time_ms``) and
the client waits, so one learner's flood slows that learner only.
"""

from __future__ import annotations

from collections.abc import Mapping

from kafka.errors import for_code
from kafka.protocol.admin.client_quotas import (
    AlterClientQuotasRequest,
    DescribeClientQuotasRequest,
)

USER = "user"  # the quota entity type of a SCRAM user name
MATCH_EXACT = 0


def _send(admin, request):
    manager = admin._manager  # no public method in kafka-python 3.0.12 (see module docstring)
    return manager.run(manager.send, request)


def alter_user_quotas(admin, quotas: Mapping[str, Mapping[str, float | None]]) -> dict[str, str]:
    """Set (a number) or remove (``None``) quota keys per user; returns ``{user: error}`` for
    the users the cluster refused (empty: all applied). Setting a value again is a no-op."""
    if not quotas:
        return {}
    Entry = AlterClientQuotasRequest.EntryData
    request = AlterClientQuotasRequest(
        entries=[
            Entry(
                entity=[Entry.EntityData(entity_type=USER, entity_name=user)],
                ops=[
                    Entry.OpData(key=k, value=0.0 if v is None else float(v), remove=v is None)
                    for k, v in sorted(ops.items())
                ],
            )
            for user, ops in sorted(quotas.items())
            if ops
        ],
        validate_only=False,
    )
    response = _send(admin, request)
    failed = {}
    for entry in response.entries:
        if entry.error_code:
            user = next((e.entity_name for e in entry.entity if e.entity_type == USER), "?")
            failed[user] = f"{for_code(entry.error_code).__name__}: {entry.error_message}"
    return failed


def describe_user_quotas(admin, users: list[str]) -> dict[str, dict[str, float]]:
    """``{user: {quota key: value}}`` as the cluster has them now (``{}``: none set)."""
    out: dict[str, dict[str, float]] = {}
    for user in users:
        Component = DescribeClientQuotasRequest.ComponentData
        request = DescribeClientQuotasRequest(
            components=[Component(entity_type=USER, match_type=MATCH_EXACT, match=user)], strict=True
        )
        response = _send(admin, request)
        if response.error_code:
            raise for_code(response.error_code)(response.error_message)
        out[user] = {v.key: v.value for entry in response.entries or () for v in entry.values}
    return out
