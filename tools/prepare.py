"""Prepare every download of the course cache before anything needs it: ``python -m tools.prepare``.

``.ci/run`` runs it before ``make test`` (``make prepare`` too), so the tests themselves download
nothing; under ``CI=true`` they run with the cache frozen, and one that finds an entry missing
fails naming it (``course_lib.cache.CacheMissing``). Each entry is made once and atomically by
:func:`course_lib.cache.prepared`: running this beside a notebook that fetches the same jars makes
one of them wait for the other. An entry whose tool is missing here (no Java, no npm, no pyspark)
is reported and skipped, and the exit code says so.

``--only NAME`` prepares the entries whose name contains NAME. The Kafka jars and the Java
driver are prepared for the lab's Kafka version (``$COURSE_KAFKA_VERSION``, else the course's
default, :data:`course_lib.clusters.jars.KAFKA_VERSION`); ``--kafka-version V`` (repeatable) prepares
those versions instead, e.g. both before comparing releases.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


#: the Kafka versions whose jars and Java driver are prepared (main() sets them from the options)
KAFKA_VERSIONS: list[str] = []


def _kafka_versions() -> list[str]:
    from course_lib.clusters import jars

    return KAFKA_VERSIONS or [jars.kafka_version()]


def _kafka_jars() -> str:
    from course_lib.clusters import jars

    return "; ".join(
        f"Kafka {v}: {len(jars.kafka_classpath(progress=False, version=v).split(':'))} jars in {jars.kafka_jar_dir(v)}"
        for v in _kafka_versions()
    )


def _spark_connector() -> str:
    from course_lib.clusters import jars

    found = jars.spark_connector_jars()
    return f"{len(found)} jars in {found[0].parent if found else '-'}"


def _java_driver() -> str:
    from course_lib.java_client.build import driver_build

    return "; ".join(f"Kafka {v}: {driver_build(kafka_version=v).classes}" for v in _kafka_versions())


def _pyodide() -> str:
    from tools.pyodide_local import PYODIDE_VERSION, SSL_SHIM_FROM, local_distribution

    return ", ".join(str(local_distribution(v)) for v in (PYODIDE_VERSION, SSL_SHIM_FROM))


def _slides() -> str:
    from tools.lesson_slides import npm_assets

    return str(npm_assets())


def _site() -> str:
    from tools.site_build import bundled_wheels, fontawesome_package

    return f"{fontawesome_package()}, {len(bundled_wheels())} wheels"


def _demo_pages() -> str:
    from tools.demo_page import npm_assets

    return str(npm_assets())


def _hub_proxy() -> str:
    from course_lib.workshop.hub_proxy import proxy_executable

    return str(proxy_executable())


#: every downloaded entry of the cache, by what needs it
ENTRIES: dict[str, Callable[[], str]] = {
    "kafka-jars (the real-Kafka lab, the Java client)": _kafka_jars,
    "spark-connector (the PySpark lab)": _spark_connector,
    "java-driver (the Java client's driver, compiled)": _java_driver,
    "pyodide (the site's tests and benchmark)": _pyodide,
    "slides (reveal.js, require.js)": _slides,
    "site (Font Awesome, the bundled wheels)": _site,
    "demo-pages (the widget html-manager, require.js, marked)": _demo_pages,
    "hub-proxy (configurable-http-proxy)": _hub_proxy,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="prepare only the entries whose name contains this")
    parser.add_argument(
        "--kafka-version",
        action="append",
        metavar="VERSION",
        help="prepare the Kafka jars and Java driver of this version (repeatable; default: the lab's version)",
    )
    args = parser.parse_args(argv)
    if args.kafka_version:
        from course_lib.clusters import jars

        try:
            KAFKA_VERSIONS[:] = [jars.check_kafka_version(v) for v in args.kafka_version]
        except ValueError as e:
            parser.error(str(e))
    failed = []
    for name, prepare in ENTRIES.items():
        if args.only and args.only not in name:
            continue
        started = time.monotonic()
        try:
            where = prepare()
        except Exception as e:  # one entry's missing tool must not hide the others' state
            failed.append(name)
            print(f"FAILED  {name}: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        print(f"ready   {name} ({time.monotonic() - started:.1f} s): {where}")
    if failed:
        print(f"{len(failed)} entries could not be prepared: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
