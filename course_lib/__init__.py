"""Kafka delivery semantics, hands-on: the library the course notebooks import.

- :mod:`course_lib.sim` - the deterministic event loop and network of the in-memory broker;
- :mod:`course_lib.broker` - replicated partition logs, ISR, controller, producer state,
  transactions, group and transaction coordinators;
- :mod:`course_lib.clients` - ``KafkaProducer`` and ``KafkaConsumer`` with kafka-python's names;
- :mod:`course_lib.history` / :mod:`course_lib.judge.checker` - one history format and one checker
  for the simulator, real Kafka and Spark;
- :mod:`course_lib.experiments.scenarios`, :mod:`course_lib.nemesis`, :mod:`course_lib.application.processing` - named
  seeded experiments, random fault schedules, consumer applications with crash points, each
  written once against :mod:`course_lib.backend` (the simulator or real Kafka);
- :mod:`course_lib.viz` - widgets and plots; :mod:`course_lib.grading` - exercises and grading;
- :mod:`course_lib.real` - a local Apache Kafka cluster and real faults;
  :mod:`course_lib.spark` - the PySpark exactly-once lab.
"""

__version__ = "0.1.0"

from .ast_lock import install as _install_ast_lock

_install_ast_lock()  # CPython 3.11.0-3.11.7: threads that log exceptions at once (course_lib.ast_lock)
