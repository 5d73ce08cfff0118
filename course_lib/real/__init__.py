"""Real Apache Kafka: jars from Maven Central, a local 3-broker KRaft cluster, real faults.

- :mod:`course_lib.real.jars` - resolve the broker and Spark connector jars into a cache;
- :mod:`course_lib.real.cluster` - :class:`LocalCluster`: start, kill, pause, restart brokers;
- :mod:`course_lib.real.proxy` - a Kafka-protocol-aware proxy that can lose one produce ACK;
- :mod:`course_lib.real.connect` - use an existing cluster, namespaced per learner.

Taught in notebooks/09_real_kafka_lab.
"""
