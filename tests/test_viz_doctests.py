"""The examples in the viz and datasets docstrings run (Data 8 style: docs that are tests)."""

import doctest
import importlib

import matplotlib
import pytest

matplotlib.use("Agg")

MODULES = [
    "course_lib.viz.cluster_view",
    "course_lib.viz.timeline",
    "course_lib.viz.simulator",
    "course_lib.viz.consumers",
    "course_lib.viz.gallery",
    "course_lib.datasets",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
