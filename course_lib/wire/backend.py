"""kafka-python's real clients against the simulated cluster, over TCP: a backend for the lab
without a JVM.

The backend is the seam's composition (:class:`~course_lib.backends.composed.ComposedBackend`:
kafka-python's client adapter on a :class:`~course_lib.wire.cluster.WireCluster`), so a
scenario's three runs differ in one thing each: simulator clients vs kafka-python on the same
simulated brokers (a client difference), kafka-python on simulated vs real brokers (a broker
difference). The wire cluster takes the lab's broker profile (:mod:`course_lib.clusters.lab`), and
its clock is the wall clock.

>>> from course_lib.scenarios import run_scenario
>>> with WireCluster.lab(seed=1) as wire:                               # doctest: +SKIP
...     result = run_scenario("lost_ack_retry", backend=wire)
"""

from __future__ import annotations

from ..backends.composed import ComposedBackend
from .cluster import WireCluster


def start_wire_backend(seed: int = 0, brokers: int = 3, **options) -> ComposedBackend:
    """kafka-python on a started lab wire cluster (stop it with ``backend.cluster.stop()``)."""
    return ComposedBackend(WireCluster.lab(brokers=brokers, seed=seed, **options).start())
