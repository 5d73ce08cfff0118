"""FindCoordinator, and asking this broker's group or transaction coordinator."""

from __future__ import annotations

from dataclasses import replace

from kafka.protocol.metadata import FindCoordinatorResponse

from ...broker import protocol as sim
from .common import _join, _reply, code


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
                    "error_message": None,
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
            error_message=None,
            node_id=row["node_id"],
            host=row["host"],
            port=row["port"],
        )

    one = _join(len(keys), finish)
    for key in keys:

        def got(resp, key=key):
            found[key] = (resp.error, resp.broker_id)
            one()

        gw.ask(sim.FindCoordinatorRequest(gw.next_corr(), key, key_type), got)


def _coordinator(gw, request: sim.CoordinatorRequest, then) -> None:
    """Ask this broker's group/transaction coordinator; ``then(error, result)``."""
    gw.ask(replace(request, corr=gw.next_corr()), lambda resp: then(resp.error, resp.result))
