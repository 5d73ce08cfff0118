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

import time
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

from course_lib.experiments import behaviour_probes as probes
from course_lib.backend import ComposedBackend, SimBackend
from course_lib.client_adapters import CLIENTS
from course_lib.judge.result import Result
from course_lib.client_adapters import client_missing
from course_lib.experiments.fidelity import MATRIX, MATRIX_CLIENTS, by_design_lines, disagreements
from course_lib.wire.cluster import WireCluster


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


def _observe(obs: Observation, backend) -> tuple[Result | None, str | None, float]:
    """``(the probe's result, why it did not run, seconds)``; the backend's clients closed."""
    t0 = time.monotonic()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return getattr(probes, obs.probe)(backend), None, round(time.monotonic() - t0, 1)
    except Exception as e:  # noqa: BLE001 - the cell says how the client failed
        return None, f"failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", 0.0
    finally:
        close = getattr(backend, "close_clients", None)
        if close is not None:
            close()


def _on_wire(obs: Observation, client: str, seed: int):
    with WireCluster.lab(seed=seed) as lab:
        return _observe(obs, ComposedBackend(lab, CLIENTS[client]()))


def on_cluster(obs: Observation, client: str, cluster) -> tuple[Result | None, str | None, float]:
    """``obs`` with ``client`` on ``cluster`` (one with broker faults: a LocalCluster, a wire
    cluster): ``(the probe's result, why it did not run, seconds)``; the cluster revived after."""
    try:
        return _observe(obs, ComposedBackend(cluster, CLIENTS[client]()))
    finally:
        cluster.revive()


def by_design_table(
    seed: int = 0, clients=MATRIX_CLIENTS, observations=OBSERVATIONS, kafka=None, kafka_why_not: str | None = None
) -> list[dict]:
    """Each observation with the simulator's clients and with each of ``clients`` on the
    simulated cluster over TCP (and on ``kafka``, a cluster with broker faults, when given):
    one row per observation, each cell what the client did (:attr:`Observation.outcome`), in the
    format of :func:`course_lib.experiments.fidelity.fidelity_table`'s rows plus ``by design`` (why the
    clients differ) and ``outcomes`` (each column's probe numbers)."""
    missing = {c: client_missing(c) for c in clients}
    no_kafka = kafka_why_not or (
        "wire only in make test: each probe kills brokers and waits out the client's timeouts "
        "(10-40 s per client on Kafka; by_design_table(kafka=cluster) runs it)"
    )
    wire = [c for c in MATRIX if c.cluster == "wire" and c.client in clients]
    on_kafka = [c for c in MATRIX if c.cluster == "kafka" and c.client in clients]
    with ThreadPoolExecutor(max(1, len(wire)), thread_name_prefix="by-design") as pool:
        futures = {
            col.key: [pool.submit(_on_wire, obs, col.client, seed) for obs in observations]
            for col in wire
            if not missing[col.client]
        }
        rows = []
        for i, obs in enumerate(observations):
            runs = {"simulator": _observe(obs, SimBackend.start(seed=1, **probes.SIM_TIMING))}
            for col in on_kafka:
                why = missing[col.client] if kafka is not None else no_kafka
                runs[col.key] = (None, why, 0.0) if why else on_cluster(obs, col.client, kafka)
            for col in wire:
                runs[col.key] = futures[col.key][i].result() if col.key in futures else (None, missing[col.client], 0.0)
            rows.append(_row(obs, {c.key: runs[c.key] for c in MATRIX if c.key in runs}))
    return rows


def _row(obs: Observation, runs: dict[str, tuple]) -> dict:
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
