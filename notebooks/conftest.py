"""nbval runs every lesson; the real-Kafka (09) and Spark (10) labs need a JVM. Without Java 17+,
Maven (or, for 10, pyspark) they are skipped with the reason shown by ``pytest -ra`` - never
silently, and never as a failure of a machine that simply lacks them."""
import importlib.util

import pytest

from course_lib.real import jars

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
