"""FindCoordinator, and asking this broker's group or transaction coordinator."""

from __future__ import annotations

from dataclasses import replace

from kafka.protocol.metadata import FindCoordinatorResponse

from kafka import errors as Errors

from ...broker import protocol as sim
from ...broker.acls import DESCRIBE, GROUP, TRANSACTIONAL_ID
from ..authorization import authorized
from .common import _join, _reply, code, kafka_message


def find_coordinator(gw, req) -> None:
    key_type = "transaction" if req.key_type == 1 else "group"
    keys = list(req.coordinator_keys) if gw.version >= 4 else [req.key]
    found: dict = {}

    def finish() -> None:
        rows = []
        for key in keys:
            error, broker = found[key]
            rows.append(
                {
                    "key": key,
                    "node_id": -1 if broker is None else broker,
                    "host": "" if broker is None else gw.wire.host,
                    "port": -1 if broker is None else gw.wire.ports[broker],
                    "error_code": code(error),
                    # KafkaApis sets no message on a v4 row: the schema's default, ""
                    "error_message": "",
                }
            )
        if gw.version >= 4:
            return _reply(gw, FindCoordinatorResponse, throttle_time_ms=0, coordinators=rows)
        row = rows[0]
        _reply(
            gw,
            FindCoordinatorResponse,
            throttle_time_ms=0,
            error_code=row["error_code"],
            # before v4, Errors.message(): the error's default message, "NONE" when found
            # (FindCoordinatorResponse.prepareOldResponse)
            error_message=kafka_message(found[keys[0]][0]),
            node_id=row["node_id"],
            host=row["host"],
            port=row["port"],
        )

    # KafkaApis: DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED) or transactional id
    # (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), each key on its own
    resource, refusal = (
        (TRANSACTIONAL_ID, Errors.TransactionalIdAuthorizationFailedError)
        if key_type == "transaction"
        else (GROUP, Errors.GroupAuthorizationFailedError)
    )
    for key in keys:
        if not authorized(gw, DESCRIBE, resource, key):
            found[key] = (refusal, None)
    one = _join(len(keys) - len(found), finish)
    for key in keys:
        if key in found:
            continue

        def got(resp, key=key):
            found[key] = (resp.error, resp.broker_id)
            one()

        gw.ask(sim.FindCoordinatorRequest(gw.next_corr(), key, key_type), got)


def _coordinator(gw, request: sim.CoordinatorRequest, then) -> None:
    """Ask this broker's group/transaction coordinator; ``then(error, result)``."""
    gw.ask(replace(request, corr=gw.next_corr()), lambda resp: then(resp.error, resp.result))
