"""Where the clients differ by design, measured: rows of the fidelity matrix (notebooks/09).

The course teaches with kafka-python and the simulator models it, but kafka-python, librdkafka
(confluent-kafka) and the Java client do not all do the same thing where Kafka leaves it to
the client. Each :class:`Observation` is a probe of :mod:`course_lib.experiments.behaviour_probes` run with
every client - a transaction after a failed send, an idempotent producer after an expired
batch, a consumer whose known brokers all died - and names what that client did, in words.
:func:`by_design_table` runs each one with the simulator's own clients and with each client on
the simulated cluster over TCP (each client on a lab :class:`~course_lib.wire.cluster.WireCluster`
of its own, in a thread of its own, so the columns run side by side), and returns rows the
matrix prints (:func:`course_lib.experiments.fidelity.fidelity_text`). Each row's ``by design`` says why
the clients differ; :func:`by_design_markdown` is the README's list, generated from a run.
Each probe is a cell of :mod:`course_lib.experiments.matrix`, run in each column by its one code path.

The Kafka columns run only when a cluster is given: each probe kills brokers and waits out a
client's timeouts (10-40 s per client on Kafka 4.3.1), so ``make test`` runs them on the wire
only; tests/real/test_fidelity_differential.py checks kafka-python's outcome of the first two
on Kafka and Java's rebootstrap.

    >>> print(OBSERVATIONS[0].outcome({"commit": "ok"}))
    commits what was sent
    >>> print(OBSERVATIONS[0].outcome({"commit": "KafkaError"}))
    refuses the commit (KafkaError)
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from functools import partial
from typing import NamedTuple

from course_lib.experiments import behaviour_probes as probes
from course_lib.experiments.fidelity import MATRIX, MATRIX_CLIENTS, by_design_lines, disagreements
from course_lib.experiments.matrix import KAFKA, SIMULATED, WIRE, Lane, Run, cell, column, run_cell, run_matrix


class Observation(NamedTuple):
    """A behaviour in which the clients differ by design."""

    probe: str  #: its function in :mod:`course_lib.experiments.behaviour_probes`
    outcome: Callable[[dict], str]  #: the probe's numbers -> what the client did, in words
    expected: dict[str, str]  #: what each client does (``simulator``: the simulator's own clients)
    why: str  #: why the clients differ


def _commit(result: dict) -> str:
    return "commits what was sent" if result["commit"] == "ok" else f"refuses the commit ({result['commit']})"


def _next_batch(result: dict) -> str:
    return "wedged: never sends the next batch" if result["second_after_10s"] == "pending" else "sends the next batch"


def _rebootstrap(result: dict) -> str:
    read = result["read_while_its_known_broker_is_down"]
    return f"rebootstraps: reads {read} from the new leader" if read else "waits for its one known broker"


#: the three by-design differences the course teaches (README "clients differ, by design")
OBSERVATIONS: list[Observation] = [
    Observation(
        "transaction_with_a_failed_send",
        _commit,
        {
            "simulator": "commits what was sent",
            "kafka-python": "commits what was sent",
            "confluent-kafka": "refuses the commit (KafkaTimeoutError)",
            "java": "refuses the commit (KafkaError)",
        },
        "a send of the transaction failed (its batch expired): kafka-python 3.0.12 commits what did get "
        "through; Java (KAFKA-5385) and librdkafka make the transaction abortable, so the commit raises "
        "and only an abort is allowed",
    ),
    Observation(
        "idempotent_batch_expired",
        _next_batch,
        {
            "simulator": "wedged: never sends the next batch",
            "kafka-python": "wedged: never sends the next batch",
            "confluent-kafka": "sends the next batch",
            "java": "sends the next batch",
        },
        "after an expired idempotent batch kafka-python 3.0.12 resets its producer id and never asks "
        "for a new one (dpkp/kafka-python#2928); Java (KIP-360) and librdkafka bump the epoch and go on",
    ),
    Observation(
        "consumer_whose_known_brokers_died",
        _rebootstrap,
        {
            "simulator": "waits for its one known broker",
            "kafka-python": "waits for its one known broker",
            "confluent-kafka": "rebootstraps: reads 3 from the new leader",
            "java": "rebootstraps: reads 3 from the new leader",
        },
        "every broker the consumer knows died: kafka-python 3.0.12 asks only the brokers its last "
        "metadata listed; Java (metadata.recovery.strategy=rebootstrap, KIP-899, the default since "
        "4.0) and librdkafka go back to bootstrap.servers and find the new leader",
    ),
]
assert all(hasattr(probes, o.probe) for o in OBSERVATIONS)

#: the :func:`~course_lib.experiments.shared_results.once_per_test_run` key of ``by_design_table()``
WIRE_TABLE = "clients differ by design, every client on the wire, seed 0"


def _cell(obs: Observation):
    return cell("probe", obs.probe)


def on_cluster(obs: Observation, client: str, cluster) -> Run:
    """``obs`` with ``client`` on ``cluster`` (one with broker faults: a LocalCluster, a wire
    cluster): ``(the probe's result, why it did not run, seconds)``; the cluster revived after."""
    return run_cell(Lane(column(client, KAFKA)), _cell(obs), cluster, seed=0)


def by_design_table(
    seed: int = 0, clients=MATRIX_CLIENTS, observations=OBSERVATIONS, kafka=None, kafka_why_not: str | None = None
) -> list[dict]:
    """Each observation with the simulator's clients and with each of ``clients`` on the
    simulated cluster over TCP (and on ``kafka``, a cluster with broker faults, when given):
    one row per observation, each cell what the client did (:attr:`Observation.outcome`), in the
    format of :func:`course_lib.experiments.fidelity.fidelity_table`'s rows plus ``by design`` (why the
    clients differ) and ``outcomes`` (each column's probe numbers). Each client's wire column runs
    in a thread of its own, each probe on a lab WireCluster of its own."""
    no_kafka = kafka_why_not or (
        "wire only in make test: each probe kills brokers and waits out the client's timeouts "
        "(10-40 s per client on Kafka; by_design_table(kafka=cluster) runs it)"
    )
    on_kafka = None if kafka is not None else no_kafka
    lanes = [Lane(SIMULATED, apart=False)]
    lanes += [Lane(column(c, KAFKA), on_kafka, partial(nullcontext, kafka), apart=False) for c in clients]
    lanes += [Lane(column(c, WIRE)) for c in clients]
    runs = run_matrix([_cell(obs) for obs in observations], lanes, seed)
    return [_row(obs, {c.key: ran[c.key] for c in MATRIX if c.key in ran}) for obs, ran in zip(observations, runs)]


def _row(obs: Observation, runs: dict[str, Run]) -> dict:
    row: dict = {"scenario": obs.probe, "parameters": {}, "by design": obs.why}
    row["outcomes"], row["not run"], row["seconds"] = {}, {}, {}
    for key, (result, why, seconds) in runs.items():
        numbers = None if result is None else result.numbers
        row[key] = None if numbers is None else [obs.outcome(numbers)]
        row["outcomes"][key], row["not run"][key], row["seconds"][key] = numbers, why, seconds
    row["expected"] = row["simulator"]
    ran = [row[c.key] for c in MATRIX if row.get(c.key) is not None]
    row["agree"] = None if len(ran) < 2 else all(r == ran[0] for r in ran)
    row["disagree"] = disagreements(row)
    return row


#: the markers of the generated list in README.md
README_START = "<!-- clients-by-design: generated by tests/wire/test_by_design.py, do not edit -->"
README_END = "<!-- /clients-by-design -->"


def by_design_markdown(rows: list[dict]) -> str:
    """The README's list of the differences by design (between :data:`README_START` and
    :data:`README_END`): each client's measured outcome and why."""
    return "\n".join([README_START, "", *by_design_lines(rows), "", README_END])
