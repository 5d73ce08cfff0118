"""The fidelity table's middle column - kafka-python on the simulated cluster over TCP - and its
text, without Java: each case runs with the simulator's clients and with kafka-python on a
WireCluster; the row agrees when both found the same anomalies, and a disagreement names the pair."""

import pytest

from course_lib.client_adapters import java_missing

from course_lib.experiments.fidelity import BY_DESIGN, column_seconds, disagreements, fidelity_table, fidelity_text

CASES = [("lost_ack_retry", {"idempotent": False}), ("random_faults", {})]


@pytest.fixture
def quiet_tqdm(monkeypatch):
    """The table's progress bar without tqdm's monitor thread (a daemon that outlives the test)."""
    import tqdm

    monkeypatch.setattr(tqdm.std.tqdm, "monitor_interval", 0)


@pytest.fixture
def stops_java_driver():
    """The Java client's shared driver process is stopped after the test (before no_leaks looks)."""
    yield
    from course_lib.client_adapters.for_java import stop_driver

    stop_driver()


def test_wire_column_runs_each_case_and_says_why_not(quiet_tqdm, no_leaks, stops_java_driver):
    rows = fidelity_table(None, CASES, seed=1, real_why_not="no Java here")
    lost_ack, schedule = rows
    assert lost_ack["wire"] == lost_ack["simulator"] == lost_ack["expected"] == ["duplicate"]
    assert lost_ack["agree"] is True and lost_ack["disagree"] == []
    assert lost_ack["wire run"].backend != lost_ack["sim"].backend
    # random_faults: the same seeded schedule, on the virtual clock and on the wire cluster's
    assert schedule["wire"] == schedule["simulator"] == schedule["expected"] == []
    assert schedule["wire why not"] is None  # (agree: whether every client agrees too, below)
    assert schedule["wire run"].notes["schedule"] == schedule["sim"].notes["schedule"]
    assert all(r["real Kafka"] is None and r["why not"] == "no Java here" for r in rows)

    # the other clients on the simulated cluster: every case ran; where one differs from
    # kafka-python the row names the pair, and the reason when the clients differ by design
    for column, client in (("wire confluent-kafka", "confluent-kafka"), ("wire java", "java")):
        if client == "java" and java_missing():
            assert all("needs a JVM" in r["not run"][column] for r in rows)
            continue
        assert lost_ack[column] == ["duplicate"] and lost_ack["not run"][column] is None
        assert schedule["not run"][column] is None
        if schedule[column] != schedule["wire"]:
            assert ("random_faults", client) in BY_DESIGN, (client, schedule[column])
            assert any(
                d.startswith(f"wire vs {column}: the clients differ") and "by design" in d for d in schedule["disagree"]
            )
    assert all(seconds > 0 for key, seconds in column_seconds(rows).items() if key.startswith("wire"))

    text = fidelity_text(rows)
    assert f"{sum(bool(r['agree']) for r in rows)} of 2 cases agree on every backend that ran them" in text
    assert "- real Kafka, lost_ack_retry, random_faults: no Java here" in text
    assert "- Kafka java, lost_ack_retry, random_faults: no Java here" in text
    assert "- wire," not in text and "failed:" not in text


def test_a_disagreement_names_the_layer_between_neighbours():
    row = {"scenario": "s", "simulator": [], "wire": [], "wire java": ["lost"], "real Kafka": [], "Kafka java": []}
    assert disagreements(row) == [
        "wire vs wire java: the clients differ (kafka-python vs java, same brokers: the simulated cluster over TCP)",
        "wire java vs Kafka java: the simulated broker differs from Kafka under java (same client, other brokers)",
    ]
    by_design = {"scenario": "random_faults", "wire": [], "wire confluent-kafka": ["duplicate"]}
    (named,) = disagreements(by_design)
    assert named.endswith("by design: " + BY_DESIGN[("random_faults", "confluent-kafka")])


def test_disagreements_name_the_pair_and_what_it_points_at():
    base = {"scenario": "s", "parameters": {}, "why not": None, "wire why not": None}
    client_bug = dict(base, simulator=["lost"], wire=[], **{"real Kafka": []}, agree=False)
    broker_bug = dict(base, simulator=["lost"], wire=["lost"], **{"real Kafka": []}, agree=False)
    assert disagreements(client_bug) == [
        "simulator vs wire: a bug of the simulated client (same brokers, other client)"
    ]
    assert disagreements(broker_bug) == [
        "wire vs real Kafka: a bug of the simulated broker (same client, other brokers)"
    ]
    text = fidelity_text([client_bug, broker_bug])
    assert "0 of 2 cases agree" in text
    assert "- s : simulator vs wire: a bug of the simulated client" in text
    assert "- s : wire vs real Kafka: a bug of the simulated broker" in text


def test_plot_has_a_column_per_backend():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from course_lib.experiments.fidelity import KAFKA_TITLE, plot_fidelity

    row = {"scenario": "s", "parameters": {}, "simulator": [], "wire": [], "real Kafka": None, "agree": True}
    fig = plot_fidelity([row])
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    plt.close(fig)
    assert labels == ["simulator clients", "kafka-python on\nthe simulated cluster", f"kafka-python on\n{KAFKA_TITLE}"]


def test_the_readme_matrix_is_replaced_whole_and_timing_dependent_rows_are_left_out_of_the_check():
    from course_lib.experiments.fidelity import README_END, README_START, readme_matrix, readme_with_matrix, timing_free

    rows = [
        {
            "scenario": "lost_ack_retry",
            "parameters": {"idempotent": False},
            "simulator": ["duplicate"],
            "wire": ["duplicate"],
        },
        {
            "scenario": "leader_crash_after_ack",
            "parameters": {"acks": "all"},
            "simulator": [],
            "wire": ["duplicate"],
            "disagree": ["simulator vs wire: by design"],
        },
    ]
    readme = f"before\n{README_START}\nold\n{README_END}\nafter\n"
    new = readme_with_matrix(readme, rows)
    assert new.startswith("before\n") and new.endswith("\nafter\n") and "old" not in new
    kept = "\n".join(timing_free(readme_matrix(new)))
    assert "| lost_ack_retry | idempotent=False | duplicate | duplicate |" in kept
    assert "leader_crash_after_ack" in readme_matrix(new) and "leader_crash_after_ack" not in kept
    # a run whose failover happened not to append twice: no disagreement, the same timing-free lines
    rows[1].update(wire=[], disagree=[])
    assert timing_free(readme_matrix(readme_with_matrix(readme, rows))) == timing_free(readme_matrix(new))
