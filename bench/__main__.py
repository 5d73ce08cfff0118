"""``python -m bench [sim] [widgets] [grading] [invariants] [real] [site] [wire] [versions] [--quick]``: print benchmark tables.

Without names: ``sim`` and ``widgets`` (what ``make bench`` prints). ``grading`` (CPU cost of every
exercise's hidden check), ``invariants`` (replication invariants over 10,000 seeded fault schedules,
about 4 minutes) and ``real`` are opt-in; ``real`` starts a 3-broker Kafka cluster (needs Java 17+
and Maven, ~2-3 minutes) and runs :mod:`bench.real_kafka`. ``site`` (opt-in, needs node and npm)
compares Pyodide with CPython and times a cold load of the static site's first demo
(:mod:`bench.site`). ``wire`` (opt-in) starts a simulated cluster that speaks the Kafka protocol
and compares it with ``LocalCluster`` (start; kafka-python's, confluent-kafka's and the Java
client's producer throughput into one wire cluster and one LocalCluster; the scenario suite;
the client differential, ``--sequences N``; :mod:`bench.wire`). ``versions`` (opt-in, ``make versions``,
needs Java and Maven, ~30 min) runs every experiment on each Kafka release the course measures and
writes what changed (:mod:`bench.kafka_versions`; ``--release V``: one release). Spark benchmarks are a separate command (see README).
``python -m bench.jvm_cpu -- COMMAND``: the CPU the JVMs a command starts use, by kind (Kafka nodes,
Spark drivers, ...), and the whole machine's meanwhile (:mod:`bench.jvm_cpu`).

``--quick``: every part as a smoke run of seconds (``real`` about a minute) that prints the same
tables from less work; ``make test`` runs each so that none rots unseen (tests/test_bench.py).
"""

import sys

CHOICES = ("sim", "widgets", "grading", "invariants", "real", "site", "wire", "versions")


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    # an option's value (``--sequences 200``) is no benchmark name
    values = {i + 1 for i, a in enumerate(argv) if a in ("--sequences", "--records", "--release")}
    names = [a for i, a in enumerate(argv) if not a.startswith("-") and i not in values]
    options = [a for i, a in enumerate(argv) if a not in names or i in values]
    unknown = sorted(set(names) - set(CHOICES))
    if unknown:
        print(f"unknown benchmark(s) {unknown}; choose from {', '.join(CHOICES)}", file=sys.stderr)
        return 2
    chosen = names or ["sim", "widgets"]
    if "sim" in chosen:
        from . import sim_throughput

        sim_throughput.main(quick=quick)
    if "widgets" in chosen:
        from . import widgets

        widgets.main(quick=quick)
    if "grading" in chosen:
        from . import grading

        grading.main(quick=quick)
    if "invariants" in chosen:
        from . import invariants

        if invariants.main(quick=quick)["violations"]:
            return 1
    if "site" in chosen:
        from . import site

        if site.main(quick=quick) != 0:
            return 1
    if "wire" in chosen:
        from . import wire

        wire.main(quick=quick, argv=[o for o in options if o != "--quick"])  # kafka-python, confluent-kafka, Java
    if "versions" in chosen:
        from . import kafka_versions

        kafka_versions.main(quick=quick, argv=[o for o in options if o != "--quick"])
    if "real" in chosen:
        from course_lib.clusters import jars

        try:
            jars.check_jvm_tools()
        except jars.JvmToolMissing as e:
            print(f"real-Kafka benchmark skipped: {str(e).splitlines()[0]}", file=sys.stderr)
            return 1
        from . import real_kafka

        quick_args = (
            ["--messages", "1000", "--budget-s", "1", "--java-records", "10000", "--sequential", "30"] if quick else []
        )
        return real_kafka.main(quick_args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
