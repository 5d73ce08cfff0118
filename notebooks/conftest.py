"""nbval runs every lesson; the real-Kafka (09) and Spark (10) labs need a JVM. Without Java 17+,
Maven (or, for 10, pyspark) they are skipped with the reason shown by ``pytest -ra`` - never
silently, and never as a failure of a machine that simply lacks them.

The lessons are committed without outputs (a learner must not see the answers before predicting);
the outputs nbval compares are in tests/notebook_expectations/ and are put back into the notebook
nbval reads here. A stored output that no longer fits its cell fails the notebook's collection."""
import importlib.util

import pytest
from nbval.plugin import IPyNbFile

from course_lib.clusters import jars
from tools import notebook_outputs

NEEDS = {"09_": "the real Kafka lab", "10_": "the PySpark lab"}


def _missing(prefix: str) -> str | None:
    try:
        jars.check_jvm_tools()
    except jars.JvmToolMissing as exc:
        return str(exc).splitlines()[0] + " (apt-get install openjdk-17-jdk-headless maven, or conda env create)"
    if prefix == "10_" and importlib.util.find_spec("pyspark") is None:
        return "pyspark is not installed (pip install -e '.[spark]')"
    return None


def pytest_collection_modifyitems(config, items):
    reasons: dict[str, str | None] = {}
    for item in items:
        prefix = item.path.name[:3]
        if prefix not in NEEDS:
            continue
        if prefix not in reasons:
            reasons[prefix] = _missing(prefix)
        if reasons[prefix]:
            item.add_marker(pytest.mark.skip(reason=f"{NEEDS[prefix]} skipped: {reasons[prefix]}"))


class NotebookWithExpectations(IPyNbFile):
    """nbval's notebook, with the checked outputs stored in tests/notebook_expectations/."""

    def collect(self):
        stored = notebook_outputs.with_expectations(self.path)  # raises on stale expectations
        for item in super().collect():  # nbval has read the committed notebook into self.nb
            index = next(i for i, c in enumerate(self.nb.cells) if c is item.cell)
            item.cell = stored.cells[index]
            yield item


@pytest.hookimpl(hookwrapper=True)
def pytest_collect_file(file_path, parent):
    outcome = yield
    collected = outcome.get_result() or []
    outcome.force_result(
        [
            NotebookWithExpectations.from_parent(parent, path=file_path) if type(c) is IPyNbFile else c
            for c in collected
        ]
    )
