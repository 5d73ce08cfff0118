"""A result computed once per test run and read back (course_lib/experiments/shared_results.py): the real
fidelity table and the Spark kill experiment are shared by tests and notebooks that way."""

import threading

import pytest

from course_lib.experiments.fidelity import fidelity_text
from course_lib.experiments.fidelity import FIDELITY_CASES, fidelity_table
from course_lib.experiments.shared_results import ENV, once_per_test_run


@pytest.fixture
def run_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV, str(tmp_path))
    return tmp_path


def test_the_second_caller_reads_the_table_the_first_computed(run_dir):
    cases = [FIDELITY_CASES[0], FIDELITY_CASES[13]]  # a producer scenario and a consumer pipeline
    computed = once_per_test_run("table", lambda: fidelity_table(None, cases, wire=False))
    shown = []
    read = once_per_test_run("table", lambda: pytest.fail("computed twice"), replay=shown.append)
    assert shown == [read] and read is not computed
    assert fidelity_text(read) == fidelity_text(computed)
    for before, after in zip(computed, read):
        assert after["sim"].cluster is None and before["sim"].cluster is not None  # the cluster stays behind
        assert after["sim"].history.ops == before["sim"].history.ops
        assert after["sim"].notes == before["sim"].notes and after["sim"].result.found == before["sim"].result.found


def test_without_a_test_run_every_call_computes(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    calls = []
    for _ in range(2):
        once_per_test_run("x", lambda: calls.append(1))
    assert len(calls) == 2


def test_a_result_that_cannot_be_stored_is_computed_again_and_says_where(run_dir):
    calls = []

    def compute():
        calls.append(1)
        return {"rows": [1, 2], "lock": threading.Lock()}

    with pytest.warns(UserWarning, match=r"result\['lock'\]: lock"):
        once_per_test_run("locked", compute)
    with pytest.warns(UserWarning):
        once_per_test_run("locked", compute)
    assert len(calls) == 2
