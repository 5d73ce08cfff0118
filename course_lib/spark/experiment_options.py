"""The knobs of one Spark lab experiment (:func:`course_lib.spark.harness.run_experiment`): how
many orders, how many kills and where, which sinks, which Spark and which Kafka.

Its own module because both the harness and the faults it injects (:mod:`course_lib.spark.faults`)
read them: neither has to import the other for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from course_lib.spark.pipeline import SINKS


@dataclass
class ExperimentOptions:
    """One flat, documented set of knobs (units last in names).

    ``kills``: how many times the job is SIGKILLed before the final run. The first kills are
    window kills, one per sink in ``window_sinks`` (in that order); the rest come at seeded
    random moments: 0-``random_kill_ms_max`` ms after the next batch of a seeded sink started. ``broker_kill_run``: during which run (0-based) a broker is SIGKILLed
    (``None`` = never); it is restarted after that run.

    ``remote``: a Spark Connect URL to run the job's queries on (``None`` = ``$SPARK_REMOTE``,
    ``""`` = local Spark with ``master``). A kill then SIGKILLs the client process and stops its
    session's queries on the server (they would outlive the client). ``kafka_options``: Spark's
    ``kafka.*`` options for an authenticated cluster (:func:`course_lib.spark.remote.lab_kafka_settings`).
    ``client_config``: kafka-python settings of an authenticated cluster
    (``RemoteCluster.client_config()``) for the loader and the final reads.
    ``learner``: the learner's prefix the job's Spark Connect session is opened under (its
    ``user_id`` on the server; default: :func:`course_lib.spark.remote.learner_name`) and the
    prefix of the loader's transactional id (a shared cluster's ACLs allow only the learner's).
    """

    n_orders: int = 800
    kills: int = 3
    seed: int = 7
    sinks: tuple[str, ...] = SINKS
    window_sinks: tuple[str, ...] = ("kafka", "store", "files")
    max_offsets_per_trigger: int = 80
    random_kill_ms_max: int = 1500
    broker_kill_run: int | None = None
    broker_kill_s: float = 1.0
    run_timeout_s: float = 300.0
    master: str = "local[2]"
    idempotent_store: bool = True
    input_topic: str = "orders"
    output_topic: str = "orders-enriched"
    remote: str | None = None
    kafka_options: dict | None = None
    client_config: dict | None = None
    learner: str | None = None
    replication_factor: int = 3  # of the topics created without a LocalCluster (min ISR: RF - 1, at least 1)
