"""One Kafka release for the whole lab: Kafka 4.4.0 by default, and ``COURSE_KAFKA_VERSION``
switches the real brokers' jars, the Java client's classpath and the release the simulated and
wire clusters model together (course_lib/clusters/jars.py is the one place the default is written).

Each switch is checked in a fresh process, as a learner's kernel or ``make test`` starts: values
fixed at import (the matrices' titles) must follow too. Nothing is downloaded or compiled: Maven
and javac are stood in for, so what is checked is which version each part asks for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from course_lib.broker import kafka_releases
from course_lib.clusters import jars

ROOT = Path(__file__).resolve().parents[1]

#: run in a fresh interpreter: every part of the lab, asked which release it runs
PROBE = textwrap.dedent(
    """
    import json, os, sys
    from pathlib import Path

    from course_lib.clusters import jars
    from course_lib.java_client import build

    tmp = Path(sys.argv[1])
    # Maven stands in: it "resolves" one jar named as Maven names kafka-clients of that version
    def maven(profile, folder, props, progress, what):
        (folder / f"kafka-clients-{props['kafka.version']}.jar").write_text("")
    jars._maven_copy = maven
    jars.check_jvm_tools = lambda: None
    javac = tmp / "javac"  # javac stands in: says its version, writes Driver.class where told
    javac.write_text('#!/bin/sh\\n[ "$1" = -version ] && echo "javac 17.0.0" && exit 0\\n'
                     'while [ $# -gt 0 ]; do [ "$1" = -d ] && touch "$2/Driver.class"; shift; done\\n')
    javac.chmod(0o755)
    build.javac_executable = lambda: str(javac)

    from course_lib.experiments import fidelity
    from course_lib.broker import Cluster, ClusterOptions
    from course_lib.explain import lesson05c
    from course_lib.real.cluster import LocalCluster
    from course_lib.wire.cluster import WireCluster

    driver = build.driver_build(root=tmp / "driver")
    print(json.dumps({
        "lab": jars.kafka_version(),
        "jars": jars.kafka_jar_dir().name,
        "local cluster": LocalCluster(progress=False).kafka_version,
        "java driver classpath": [Path(p).name for p in driver.kafka_classpath.split(os.pathsep)],
        "simulator": ClusterOptions().kafka_version,
        "simulated cluster": Cluster(brokers=1, seed=1).options.kafka_version,
        "simulated share.version": Cluster(brokers=1, seed=1).options.share_version,
        "wire cluster": WireCluster(brokers=1, seed=1).cluster.options.kafka_version,
        "matrix title": fidelity.KAFKA_TITLE,
        "lesson 05c": lesson05c.real_question().split(":")[0],
    }))
    """
)


def lab_in_a_fresh_process(tmp_path: Path, version: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in (jars.KAFKA_VERSION_ENV, "COURSE_CACHE_FROZEN")}
    env["COURSE_CACHE_DIR"] = str(tmp_path / "cache")  # a private cache: nothing real is touched
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    if version is not None:
        env[jars.KAFKA_VERSION_ENV] = version
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path)], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def every_part_runs(version: str) -> dict:
    """What each part of the lab must say when the lab runs ``version``."""
    return {
        "lab": version,
        "jars": f"kafka-{version}",
        "local cluster": version,
        "java driver classpath": [f"kafka-clients-{version}.jar"],
        "simulator": version,
        "simulated cluster": version,
        "simulated share.version": kafka_releases.RELEASE_FEATURES[version]["share.version"],
        "wire cluster": version,
        "matrix title": f"Kafka {version}",
        "lesson 05c": f"Kafka {version}",
    }


def test_the_default_is_kafka_4_4_0_in_one_place():
    assert jars.KAFKA_VERSION == "4.4.0"
    assert jars.kafka_version({}) == "4.4.0"
    # the simulator re-exports the lab's default, its supported releases and its one check
    assert kafka_releases.DEFAULT_KAFKA_VERSION is jars.KAFKA_VERSION
    assert kafka_releases.check_kafka_version is jars.check_kafka_version
    assert tuple(kafka_releases.RELEASE_FEATURES) == jars.SUPPORTED_KAFKA_VERSIONS
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    pom_default = ET.parse(jars.POM).getroot().find("m:properties/m:kafka.version", ns)
    assert pom_default is not None and pom_default.text == jars.KAFKA_VERSION


def test_unset_the_whole_lab_runs_the_default(tmp_path):
    assert lab_in_a_fresh_process(tmp_path, None) == every_part_runs(jars.KAFKA_VERSION)


@pytest.mark.parametrize("version", [v for v in jars.SUPPORTED_KAFKA_VERSIONS if v != jars.KAFKA_VERSION])
def test_one_setting_switches_jars_java_driver_and_simulator_together(tmp_path, version):
    """``COURSE_KAFKA_VERSION=4.3.1 make test``: every part moves, none stays on the default."""
    assert lab_in_a_fresh_process(tmp_path, version) == every_part_runs(version)


def test_a_version_the_course_does_not_measure_is_refused_everywhere():
    from course_lib.broker import ClusterOptions

    with pytest.raises(ValueError, match=r"use one of 4\.3\.1, 4\.4\.0 \(the default: 4\.4\.0\)"):
        jars.kafka_version({jars.KAFKA_VERSION_ENV: "4.2"})
    with pytest.raises(ValueError, match="kafka_version='3.9.0' is not a Kafka version this course measures"):
        ClusterOptions.from_kwargs(kafka_version="3.9.0")


def test_the_readmes_instructions_name_only_releases_the_course_measures():
    """The README cannot compute the default; the versions its instructions name must exist."""
    import re

    text = (ROOT / "README.md").read_text()
    section = text.split("**Which Kafka release.**", 1)[1].split("Every scenario is written once", 1)[0]
    named = set(re.findall(r"\b4\.\d+\.\d+\b", section))
    assert named and named <= set(jars.SUPPORTED_KAFKA_VERSIONS), named


def test_each_release_describes_the_configs_kafka_described():
    """Kafka 4.4.0's DescribeConfigs answers broker and topic configs 4.3.1 has not
    (tests/real/test_describe_configs_real.py measures them on the lab's release)."""
    from course_lib.broker.topic_configs import catalogue

    new, old = catalogue("4.4.0"), catalogue("4.3.1")
    assert new["broker"]["group.streams.assignors"] == {
        "default": "sticky",
        "type": "LIST",
        "read_only": True,
        "sensitive": False,
    }
    assert "group.streams.assignors" not in old["broker"]
    assert new["topic"]["remote.copy.lag.ms"]["default"] == "0" and "remote.copy.lag.ms" not in old["topic"]
