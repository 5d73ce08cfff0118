"""Real Apache Kafka: jars from Maven Central, a local 3-broker KRaft cluster, real faults.

- :mod:`course_lib.clusters.jars` - resolve the broker and Spark connector jars into a cache;
- :mod:`course_lib.real.cluster` - :class:`LocalCluster`: start, kill, pause, restart brokers;
- :mod:`course_lib.real.processes` - the JVM processes of a local cluster: ports, logs, signals;
- :mod:`course_lib.real.admin` - one metadata view (topics, leaders, ISR) of a local or remote cluster;
- :mod:`course_lib.real.proxy` - a Kafka-protocol-aware proxy that can lose one produce ACK;
- :mod:`course_lib.real.connect` - use an existing cluster, namespaced per learner;
- :mod:`course_lib.client_adapters.recording` - kafka-python's clients writing the course's history;
- :mod:`course_lib.experiments.fidelity` (above the seam) - every scenario on the simulator and on real Kafka.

Scenarios run on real Kafka through :class:`course_lib.backend.ComposedBackend` (kafka-python x a real cluster):
``run_scenario(name, backend=LocalCluster())``.

Taught in notebooks/09_real_kafka_lab.
"""

# (`connect` is also a submodule name, so import it as `from course_lib.real.connect import connect`.)
# Lazy, so that importing one submodule does not start the others' imports. (The jars are
# course_lib.clusters.jars; the fidelity table is course_lib.experiments.fidelity.)
_EXPORTS = {
    "LocalCluster": "cluster",
    "KafkaProxy": "proxy",
}


def __getattr__(name):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
