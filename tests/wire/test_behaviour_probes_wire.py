"""The fidelity experiments (course_lib.experiments.behaviour_probes, issue 11) with kafka-python's real clients on
the simulated cluster: the same outcome as the simulator's own clients - which
tests/real/test_fidelity_differential.py checks against Kafka 4.3.1. Together: the three columns
simulator clients · kafka-python on the simulated cluster · kafka-python on Kafka agree."""

import threading
import warnings

import pytest

from course_lib.experiments import behaviour_probes as probes
from course_lib.backend import SimBackend
from course_lib.backend import ComposedBackend
from course_lib.experiments.by_design import OBSERVATIONS, WIRE_TABLE, by_design_table
from course_lib.experiments.shared_results import once_per_test_run
from course_lib.wire.cluster import WireCluster

from .conftest import wire_threads

EXPERIMENTS = [
    "strict_min_isr_high_watermark",
    "transaction_with_a_failed_send",
    "idempotent_batch_expired",
    "close_with_a_record_unfinished",
    "zombie_transactional_send",
    "elr_clean_election",
    "acks0_to_a_deposed_leader",
    "consumer_after_unclean_election",
    "consumer_whose_known_brokers_died",
]
#: the experiments the by-design table already runs with kafka-python on a wire cluster (seed 0,
#: beside the other clients' columns); not transaction_with_a_failed_send, whose failed send ends
#: with the error of its last attempt or its expiry depending on the machine's load (its commit,
#: which the table compares, does not)
BY_DESIGN = {o.probe for o in OBSERVATIONS} - {"transaction_with_a_failed_send"}


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_kafka_python_on_the_simulated_cluster_sees_what_the_simulator_clients_see(name):
    experiment = getattr(probes, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        simulated = experiment(SimBackend.start(seed=1, **probes.SIM_TIMING)).numbers
    if name in BY_DESIGN:  # kafka-python's run of the by-design table (tests/wire/test_by_design.py)
        (row,) = [r for r in once_per_test_run(WIRE_TABLE, by_design_table) if r["scenario"] == name]
        assert row["outcomes"]["wire"] == simulated
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with WireCluster.lab(seed=1) as lab:
            backend = ComposedBackend(lab)
            try:
                over_the_wire = experiment(backend).numbers
            finally:
                backend.close_clients()
    assert over_the_wire == simulated
    # the server's threads are gone, and so are kafka-python's: close_clients() stops a producer
    # whose close() refused (idempotent_batch_expired's wedged sender would retry for the rest
    # of the process, its sockets counted against whichever test checks for leaks next)
    assert not wire_threads()
    assert not [t.name for t in threading.enumerate() if t.name.endswith("-network-thread")]


def test_a_client_started_while_brokers_are_down_bootstraps_from_a_live_one(monkeypatch):
    """kafka-python 3.0.12 draws a bootstrap address at random and waits out a dead broker's
    reconnect backoff before drawing again, so consumer_after_unclean_election (a consumer
    started with two of three brokers down) missed its bootstrap timeout about one run in
    twenty. Here the draw always takes the last address - a dead broker's, were it offered."""
    import kafka.net.manager

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with WireCluster.lab(seed=1) as lab:
            backend = ComposedBackend(lab)
            try:
                topic = backend.create_topic("t", replication_factor=3, min_insync_replicas=1)
                backend.crash(2)
                backend.crash(3)
                backend.until_isr_shrinks(topic, to=1)  # fenced: metadata lists broker 1 alone
                monkeypatch.setattr(kafka.net.manager.random, "choice", lambda seq: seq[-1])
                consumer = backend.consumer(bootstrap_timeout_ms=3000)
                assert topic in consumer._consumer.topics()
            finally:
                backend.close_clients()
    assert not wire_threads()
