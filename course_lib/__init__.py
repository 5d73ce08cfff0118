"""Kafka delivery semantics, hands-on: the library the course notebooks import.

- :mod:`course_lib.sim` - the deterministic event loop and network of the in-memory broker;
- :mod:`course_lib.broker` - replicated partition logs, ISR, controller, producer state;
- :mod:`course_lib.clients` - ``KafkaProducer`` with kafka-python's names, for the simulator;
- :mod:`course_lib.history` / :mod:`course_lib.checker` - one history format and one checker
  for the simulator, real Kafka and Spark;
- :mod:`course_lib.scenarios` - named, seeded experiments the notebooks run;
- :mod:`course_lib.real` - a local Apache Kafka cluster and real faults.
"""
__version__ = "0.1.0"
