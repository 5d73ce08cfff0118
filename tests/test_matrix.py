"""The one code path of every table's cells (course_lib/experiments/matrix.py): a cell that cannot
run says why (the client lacks the workload, the table's reason, the cluster lacks a part), a
failing run says how - or fails the table in a strict lane - and a lane none of whose cells runs
starts no cluster. Fast: a place of its own stands for the clusters."""

from __future__ import annotations

import contextlib

import pytest

from course_lib.backend import MissingFault
from course_lib.client_adapters import LACKS
from course_lib.experiments.matrix import SIMULATED, WIRE, Column, Lane, Place, cell, column, run_cell, run_matrix
from course_lib.judge.result import Result

LEADER_CRASH = cell("scenario", "leader_crash_after_ack", acks=1)


class _Scripted(Place):
    """A place whose scenario runs answer from a script: a result, or an exception to raise."""

    name, title = "scripted", "a scripted place"

    def __init__(self, answer) -> None:
        self.answer, self.clusters = answer, []

    def scenario(self, experiment, settings, client, cluster, seed) -> Result:
        self.clusters.append(cluster)
        if isinstance(self.answer, BaseException):
            raise self.answer
        return Result("scenario", experiment.name, numbers={"seed": seed, **settings})


def _lane(answer, **lane) -> Lane:
    return Lane(Column("scripted", "", _Scripted(answer), "a scripted place"), **lane)


def test_a_client_without_the_workload_says_so_and_starts_nothing():
    share = cell("share group", "share group")
    result, why, seconds = run_cell(Lane(column("kafka-python", WIRE)), share, None, seed=0)
    assert (result, why, seconds) == (None, LACKS["kafka-python"]["share"], 0.0)


def test_a_failed_run_says_how_unless_the_lane_is_strict():
    _, why, _ = run_cell(_lane(RuntimeError("boom\nmore")), LEADER_CRASH, None, seed=0)
    assert why == "the simulator failed: RuntimeError: boom"
    _, why, _ = run_cell(_lane(MissingFault("no broker faults here")), LEADER_CRASH, None, seed=0)
    assert why == "no broker faults here"
    with pytest.raises(RuntimeError, match="boom"):
        run_cell(_lane(RuntimeError("boom"), strict=True), LEADER_CRASH, None, seed=0)


def test_the_tables_reason_comes_after_the_clients_and_a_stored_run_is_read_back():
    assert run_cell(_lane(None, why="no Kafka in this run"), LEADER_CRASH, None, seed=0)[1] == "no Kafka in this run"
    stored = Result("scenario", "stored")
    read = run_cell(_lane(None, why="read only", shared=lambda c, compute: stored), LEADER_CRASH, None, seed=0)
    assert read[:2] == (stored, None)


def test_lanes_run_apart_or_here_in_row_order_and_an_idle_lane_starts_no_cluster():
    entered = []

    @contextlib.contextmanager
    def cluster(name):
        entered.append(name)
        yield name

    cells = [LEADER_CRASH, cell("scenario", "lost_ack_retry", idempotent=True)]
    apart, here = _lane(None, runs_on=lambda: cluster("apart")), _lane(None, runs_on=lambda: cluster("here"))
    here = here._replace(column=here.column._replace(key="here"), apart=False)
    idle = _lane(None, runs_on=lambda: cluster("idle"), why="not asked for")
    idle = idle._replace(column=idle.column._replace(key="idle"))
    loose = _lane(None)  # its runs start their own clusters: its cells share a pool
    loose = loose._replace(column=loose.column._replace(key="loose"))
    seen = []
    rows = run_matrix(cells, [apart, here, idle, loose], seed=7, on_row=lambda c, runs: seen.append(c))
    assert loose.column.place.clusters == [None, None] and [r["loose"][1] for r in rows] == [None, None]
    assert seen == cells and sorted(entered) == ["apart", "here"]
    assert [r["scripted"][0].numbers for r in rows] == [{"seed": 7, "acks": 1}, {"seed": 7, "idempotent": True}]
    assert apart.column.place.clusters == ["apart", "apart"] and here.column.place.clusters == ["here", "here"]
    assert all(r["idle"] == (None, "not asked for", 0.0) for r in rows)


def test_the_simulator_runs_a_probe_of_the_registry():
    result, why, _ = run_cell(Lane(SIMULATED), cell("probe", "strict_min_isr_high_watermark"), None, seed=0)
    assert why is None and result.numbers == {"acknowledged": 5, "read": 0, "isr": 2}
