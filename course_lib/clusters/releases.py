"""The Kafka releases the course measures, and which one the lab runs: written down here once,
asked by every cluster - the simulated and wire clusters (``ClusterOptions.kafka_version``,
:mod:`course_lib.broker.kafka_releases`), the real brokers and the Java client
(:mod:`course_lib.clusters.jars`) - so one setting switches them together::

    COURSE_KAFKA_VERSION=4.3.1 make test        # or export it before starting JupyterLab

>>> kafka_version({})
'4.4.0'
>>> kafka_version({"COURSE_KAFKA_VERSION": "4.3.1"})
'4.3.1'
>>> kafka_version({"COURSE_KAFKA_VERSION": "4.2"})
Traceback (most recent call last):
...
ValueError: COURSE_KAFKA_VERSION='4.2' is not a Kafka version this course measures; use one of 4.3.1, 4.4.0 (the default: 4.4.0)
>>> check_kafka_version("4.2.0")
Traceback (most recent call last):
...
ValueError: kafka_version='4.2.0' is not a Kafka version this course measures; use one of 4.3.1, 4.4.0 (the default: 4.4.0)
"""

from __future__ import annotations

import os
from collections.abc import Mapping

#: The default Kafka version of the whole lab (real brokers, Java client, simulator, wire cluster):
#: the one source of truth. Must equal ``<kafka.version>`` in course_lib/real/pom.xml
#: (tests/test_kafka_version.py keeps them in sync); the version actually used is :func:`kafka_version`.
KAFKA_VERSION = "4.4.0"
#: The versions the course measures, oldest first; ``$COURSE_KAFKA_VERSION`` picks one of them.
#: The simulator models exactly these (``course_lib.broker.kafka_releases`` checks it).
SUPPORTED_KAFKA_VERSIONS = ("4.3.1", "4.4.0")
KAFKA_VERSION_ENV = "COURSE_KAFKA_VERSION"


def kafka_version(environ: Mapping[str, str] | None = None) -> str:
    """The Kafka version the lab runs: ``$COURSE_KAFKA_VERSION`` if set, else :data:`KAFKA_VERSION`.

    Read at each call (like the cache folder), so a process that sets the variable before
    starting a cluster gets that version everywhere. A value the course does not measure is
    refused with the values it takes."""
    env = os.environ if environ is None else environ
    asked = env.get(KAFKA_VERSION_ENV, "").strip()
    if not asked:
        return KAFKA_VERSION
    return check_kafka_version(asked, source=f"{KAFKA_VERSION_ENV}={asked!r}")


def check_kafka_version(version: str, source: str | None = None) -> str:
    """``version`` if the course measures it, else :class:`ValueError` saying which it does.

    The one check of a Kafka version: the real cluster, the Java client, ``tools/prepare`` and
    the simulator's ``ClusterOptions(kafka_version=...)`` all call it. ``source`` names where the
    value came from (default: ``kafka_version=<value>``)."""
    if version not in SUPPORTED_KAFKA_VERSIONS:
        raise ValueError(
            f"{source or f'kafka_version={version!r}'} is not a Kafka version this course measures; use one of "
            f"{', '.join(SUPPORTED_KAFKA_VERSIONS)} (the default: {KAFKA_VERSION})"
        )
    return version


def as_released(text: str, version: str | None = None) -> str:
    """``text`` generated on the lab's default release (:data:`KAFKA_VERSION`) as a run of
    ``version`` (default: :func:`kafka_version`) prints it: the release it names is replaced.
    The README's matrices are generated on the default release; a run on another one is checked
    against them this way - its cells must be the same, only the titles name its release
    (``make versions`` measures what does change from one release to the next).

    >>> as_released("Java 4.4.0 on Kafka 4.4.0", "4.3.1")
    'Java 4.3.1 on Kafka 4.3.1'
    """
    return text.replace(KAFKA_VERSION, version or kafka_version())
