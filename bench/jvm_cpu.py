"""``python -m bench.jvm_cpu [--every S] -- COMMAND ...``: run COMMAND and print how much CPU the
JVMs it started used, by kind (Kafka nodes, storage formatting, Spark drivers, Java client
drivers, ...).

``make test`` is CPU-bound on 2 cores and most of its CPU goes to JVMs. So this is the measure for
a change to how the lab starts them (``-XX:TieredStopAtLevel``, the GC, class-data sharing:
:mod:`course_lib.clusters.class_sharing`). Run it around the same command before and after::

    python -m bench.jvm_cpu -- .venv/bin/python -m pytest -q tests/real/test_lifecycle.py

It reads ``/proc`` every ``--every`` seconds (default 0.5). A JVM that lives less than that may be
missed, and one's last half second is not counted. Linux only.

>>> kind_of(["java", "-cp", "x", "kafka.Kafka", "broker.properties"])
'Kafka node'
>>> kind_of(["java", "-Xmx1g", "org.apache.spark.deploy.SparkSubmit", "pyspark-shell"])
'Spark driver'
>>> kind_of(["python", "x.py"]) is None
True
"""

from __future__ import annotations

import collections
import os
import subprocess
import sys
import time
from pathlib import Path

#: a JVM's kind: the first of these main classes (or markers) on its command line
KINDS = (
    ("kafka.Kafka", "Kafka node"),
    ("kafka.tools.StorageTool", "Kafka storage format"),
    ("org.apache.spark.deploy.SparkSubmit", "Spark driver"),
    ("java-client-driver", "Java client driver"),
    ("org.codehaus.plexus.classworlds", "Maven"),
    ("sun.tools.jcmd", "jcmd"),
)
TICK = os.sysconf("SC_CLK_TCK")


def kind_of(argv: list[str]) -> str | None:
    """The kind of a process with command line ``argv``; None if it is no JVM."""
    if not argv or not Path(argv[0]).name.startswith("java"):
        return None
    line = " ".join(argv)
    return next((kind for marker, kind in KINDS if marker in line), "other JVM")


def _jvms() -> dict[int, tuple[str, float]]:
    """Every running JVM: its kind and the CPU it used so far, by pid."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            kind = kind_of(argv)
            if kind is None:
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            found[int(entry.name)] = (kind, (int(fields[11]) + int(fields[12])) / TICK)
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
    return found


def machine_cpu_s() -> float:
    """CPU seconds the whole machine has been busy since boot (every core, every process)."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, Path("/proc/stat").read_text().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / TICK


def measure(command: list[str], every_s: float = 0.5) -> tuple[int, dict[str, list[float]]]:
    """Run ``command``; its exit code and the CPU seconds of each JVM that appeared, by kind
    (and under ``"machine"`` the busy CPU seconds of the whole machine meanwhile)."""
    before = set(_jvms())
    busy = machine_cpu_s()
    seen: dict[int, tuple[str, float]] = {}
    proc = subprocess.Popen(command)
    while proc.poll() is None:
        for pid, (kind, cpu) in _jvms().items():
            if pid not in before:
                seen[pid] = (kind, max(cpu, seen.get(pid, (kind, 0.0))[1]))
        time.sleep(every_s)
    by_kind: dict[str, list[float]] = collections.defaultdict(list)
    for kind, cpu in seen.values():
        by_kind[kind].append(cpu)
    by_kind["machine"] = [machine_cpu_s() - busy]
    return proc.returncode, dict(by_kind)


def table(by_kind: dict[str, list[float]]) -> str:
    """The table :func:`main` prints.

    >>> print(table({"Kafka node": [2.0, 4.0], "machine": [10.0]}))
    | JVMs | started | CPU s | CPU s each (mean) |
    |---|---:|---:|---:|
    | Kafka node | 2 | 6.0 | 3.00 |
    | all JVMs | 2 | 6.0 | |
    | the whole machine, busy | | 10.0 | |
    """
    jvms = {kind: cpus for kind, cpus in by_kind.items() if kind != "machine"}
    rows = ["| JVMs | started | CPU s | CPU s each (mean) |", "|---|---:|---:|---:|"]
    for kind, cpus in sorted(jvms.items(), key=lambda kv: -sum(kv[1])):
        rows.append(f"| {kind} | {len(cpus)} | {sum(cpus):.1f} | {sum(cpus) / len(cpus):.2f} |")
    total = [c for cpus in jvms.values() for c in cpus]
    rows.append(f"| all JVMs | {len(total)} | {sum(total):.1f} | |")
    if "machine" in by_kind:
        rows.append(f"| the whole machine, busy | | {sum(by_kind['machine']):.1f} | |")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    every_s = 0.5
    if argv[:1] == ["--every"]:
        every_s, argv = float(argv[1]), argv[2:]
    if argv[:1] != ["--"] or len(argv) < 2:
        print("usage: python -m bench.jvm_cpu [--every S] -- COMMAND ...", file=sys.stderr)
        return 2
    code, by_kind = measure(argv[1:], every_s)
    print(table(by_kind))
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
