"""pyproject.toml is the single source of Python dependencies; environment.yml only adds what
pip cannot install and installs the package itself."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_dependency_has_a_pinned_range():
    project = PYPROJECT["project"]
    deps = list(project["dependencies"])
    for _name, extra in project["optional-dependencies"].items():
        deps += [d for d in extra if not d.startswith("kafka-delivery-course[")]
    for dep in deps:
        assert ">=" in dep and "<" in dep.replace("<=", ""), f"{dep!r} needs a lower and an upper bound"


def test_environment_yml_matches_pyproject():
    text = (ROOT / "environment.yml").read_text()
    python = re.search(r"^\s*-\s*python=(\S+)", text, re.M)
    assert python, "environment.yml must pin python"
    minimum = re.search(r">=\s*([\d.]+)", PYPROJECT["project"]["requires-python"]).group(1)
    assert python.group(1).split(".")[:2] >= minimum.split(".")[:2]
    assert re.search(r"^\s*-\s*openjdk=17", text, re.M), "the real-Kafka and Spark labs need OpenJDK 17"
    assert re.search(r"^\s*-\s*maven\b", text, re.M)
    assert re.search(r"^\s*-\s*-e \.\[all\]", text, re.M), "install the package itself with pip: -e .[all]"
    # no Python package is listed twice: everything else comes from pyproject
    dependencies = text.split("\ndependencies:", 1)[1]
    conda_names = set(re.findall(r"^\s{2}-\s*([A-Za-z0-9_.-]+)", dependencies, re.M))
    assert conda_names <= {"python", "openjdk", "maven", "pip"}, conda_names
