"""The README's simulator example runs and prints what it promises."""

import re
from pathlib import Path


def test_readme_example_runs(capsys):
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    example = re.search(r"## The simulator in five lines.*?```python\n(.*?)```", text, re.S).group(1)
    exec(compile(example, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "lost after being acknowledged - allowed by this configuration (acks=1" in out


def test_readme_wire_example_runs(capsys):
    """The wire section's example: kafka-python's idempotent producer through a lost ACK."""
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    example = re.search(r"## The simulated cluster over the wire.*?```python\n(.*?)```", text, re.S).group(1)
    exec(compile(example, "README.md", "exec"), {})
    assert capsys.readouterr().out.strip() == "[(0, None, b'hello'), (1, None, b'again')]"


def test_readme_confluent_kafka_fixture_example_runs():
    """The plugin section's confluent-kafka test, run with the plugin's fixture (the one it names)."""
    import gc

    import pytest

    pytest.importorskip("confluent_kafka")
    from course_lib.wire.pytest_plugin import wire_cluster

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    example = re.search(
        r"## The simulated cluster over the wire.*?With confluent-kafka.*?```python\n(.*?)```", text, re.S
    )
    namespace: dict = {}
    exec(compile(example.group(1), "README.md", "exec"), namespace)
    fixture = wire_cluster.__wrapped__(_NoOptions())
    wire = next(fixture)
    try:
        namespace["test_orders_round_trip_with_librdkafka"](wire)
        gc.collect()  # librdkafka's producer handle goes with its last reference
    finally:
        fixture.close()


class _NoOptions:
    """A request without the plugin's options (it falls back to its defaults)."""

    class config:
        @staticmethod
        def getoption(name):
            raise ValueError(name)


#: a duration written by hand ("~4 min", "(3-4 min", "about 10 s"): a measured number that goes
#: stale; the README's measured tables are generated between <!-- name --> ... <!-- /name -->
HAND_DURATION = re.compile(r"(~|about |\()\s*\d+(\.\d+)?(\s*-\s*\d+)?\s*(min|minutes|s|seconds|ms)\b")
GENERATED = re.compile(r"<!-- ([\w-]+)[^>]*-->.*?<!-- /\1 -->", re.S)


def hand_durations(text: str) -> list[str]:
    """The lines of ``text`` outside its generated blocks that give a duration by hand.

    >>> hand_durations("a (3-4 min on 2 cores)\\n<!-- t: generated -->\\n~5 s\\n<!-- /t -->\\nlock 30 s")
    ['a (3-4 min on 2 cores)']
    """
    return [line for line in GENERATED.sub("", text).splitlines() if HAND_DURATION.search(line)]


def test_the_readme_gives_no_duration_by_hand():
    """How long something takes is measured where it runs (``--durations``, ``python -m bench``)."""
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert hand_durations(text) == []
