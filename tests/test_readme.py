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
