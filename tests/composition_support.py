"""Every client adapter composed with one cluster, in every workload: the body of
tests/test_composition.py (the simulated cluster, the wire cluster) and
tests/real/test_composition_real.py (Kafka). A composition that cannot run is not skipped: it must
say why, and the workload's contract must refuse it with that reason."""

from __future__ import annotations

import pytest

from course_lib.client_adapters import ALL_CLIENTS, LACKS, WORKLOADS, group_member, share_consumer
from course_lib.experiments import workloads

#: every (client, workload), in the order a reader scans a matrix
COMPOSITIONS = [(client, workload) for client in ALL_CLIENTS for workload in WORKLOADS]

#: each workload's contract, called as an application would for a client that lacks it
CONTRACT_CALL = {
    "consumer protocol": lambda client: group_member(client, {"group.protocol": "consumer"}, ["t"]),
    "share": lambda client: share_consumer(client, {}),
}


def compose_and_run(client: str, workload: str, cluster, reuse=None) -> None:
    """``workload`` with ``client`` on ``cluster``: it passes, or it says why it cannot run (a
    client that lacks the workload is refused by the contract itself). ``reuse(workload,
    client)``: the same experiment's result a matrix of this test run already holds (its cell is
    computed once per run), or None to run it here."""
    why = workloads.why_not(workload, client, cluster)
    if why is not None:
        with pytest.raises(ValueError, match="cannot run"):
            workloads.run(workload, client, cluster)
        if workload in LACKS.get(client, {}):
            with pytest.raises(ValueError):
                CONTRACT_CALL[workload](client)
        return print(f"{client} x {workload}: not run: {why}")
    got = (reuse and reuse(workload, client)) or workloads.run(workload, client, cluster)
    assert workloads.problems(workload, got) == [], (client, workload, got)
    print(f"{client} x {workload}: {got}")


def share_cell(place: str):
    """``reuse`` for the share workload: the protocol matrix's share-group run of the client at
    ``place`` ("wire", "Kafka"), once per test run - the same experiment through the same
    contract (``kafka``: the cluster a Kafka cell runs on)."""
    from course_lib.experiments import protocol_matrix

    def cell(workload: str, client: str, kafka=None):
        if workload != "share":
            return None
        return protocol_matrix.measured("share group", f"{place} {client}", kafka)

    return cell
