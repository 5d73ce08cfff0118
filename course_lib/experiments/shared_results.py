"""One expensive result per test run, shared by the tests and the notebooks that run it.

A learner's call always computes: ``once_per_test_run(key, compute)`` is ``compute()``. A test
session (tests/conftest.py) sets :data:`ENV` to a fresh directory; the notebook kernels nbval
starts inherit it. There the first caller of a ``key`` computes and stores its result, and every
later caller of the same ``key`` - a test, or the same call in a notebook under test - reads it
instead of computing it again. The fidelity table of every scenario on real Kafka, for one, is
asserted row by row by tests/real and shown by notebook 09: one computation per ``make test``.

    >>> import os, tempfile
    >>> saved = os.environ.get(ENV)                     # (this doctest may run inside a test run)
    >>> os.environ[ENV] = tempfile.mkdtemp()
    >>> calls = []
    >>> once_per_test_run("demo", lambda: calls.append(1) or len(calls))
    1
    >>> once_per_test_run("demo", lambda: calls.append(1) or len(calls))   # read, not computed
    1
    >>> del os.environ[ENV]
    >>> once_per_test_run("demo", lambda: calls.append(1) or len(calls))   # a learner: computed
    2
    >>> os.environ.update({ENV: saved} if saved else {})

A stored run result (a :class:`~course_lib.judge.result.Result`) keeps its history, checker
result, numbers and notes; its ``cluster`` is None (the cluster it ran on is stopped by then).
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import io
import os
import pickle
import re
import warnings
from pathlib import Path
from typing import Any, Callable, TypeVar

T = TypeVar("T")

#: the directory of the current test run's shared results (unset outside a test run)
ENV = "COURSE_SHARED_RESULTS"


def once_per_test_run(key: str, compute: Callable[[], T], replay: Callable[[T], Any] | None = None) -> T:
    """``compute()``; in a test run (:data:`ENV` set), the result of the run's first call of
    ``key``. ``replay(result)`` is called with a result read back, so a caller that streams what
    ``compute`` finds (the lab's table, row by row) shows it as well."""
    folder = os.environ.get(ENV)
    if not folder:
        return compute()
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]  # a key may be long (an options repr)
    readable = re.sub(r"[^\w.-]+", "_", key)[:60]
    path = Path(folder) / f"{readable}-{digest}.pickle"
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second caller waits for the first, then reads
        if path.exists():
            result = pickle.loads(path.read_bytes())
            if replay is not None:
                replay(result)
            return result
        result = compute()
        buffer = io.BytesIO()
        try:
            _Pickler(buffer).dump(result)
        except (TypeError, AttributeError, pickle.PicklingError) as e:  # the next caller computes it again
            warnings.warn(f"{key}: not shared, {_unpicklable(result) or e}", stacklevel=2)
        else:
            path.write_bytes(buffer.getvalue())
        return result


def _unpicklable(obj, path: str = "result", depth: int = 8) -> str | None:
    """Where in ``obj`` the first part that cannot be stored is (for the warning)."""
    try:
        _Pickler(io.BytesIO()).dump(obj)
        return None
    except Exception as e:  # noqa: BLE001 - any failure is what we look for
        error = f"{path}: {type(obj).__name__} ({e})"
    if depth == 0:
        return error
    if isinstance(obj, dict):
        parts = [(f"{path}[{k!r}]", v) for k, v in obj.items()]
    elif isinstance(obj, (list, tuple, set)):
        parts = [(f"{path}[{i}]", v) for i, v in enumerate(obj)]
    elif hasattr(obj, "__dict__"):
        parts = [(f"{path}.{k}", v) for k, v in vars(obj).items()]
    else:
        parts = []
    for where, part in parts:
        found = _unpicklable(part, where, depth - 1)
        if found:
            return found
    return error


def _without_cluster(cls, fields: dict):
    return cls(**fields, cluster=None)


class _Pickler(pickle.Pickler):
    """Histories without their clock and lock; a run's result (a ``Result``, any dataclass with a
    ``cluster``) without its cluster."""

    def reducer_override(self, obj):
        from course_lib.history import History

        if isinstance(obj, History):
            return History, (None, obj.ops)
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type) and getattr(obj, "cluster", None) is not None:
            fields = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj) if f.init and f.name != "cluster"}
            return _without_cluster, (type(obj), fields)
        return NotImplemented
