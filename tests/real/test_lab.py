"""The real-Kafka lab's plumbing that needs no cluster: skip path, tables, verdicts, bench CLI."""

import threading

from course_lib.experiments import fidelity
from course_lib.clusters import jars
from course_lib.real import lab
from course_lib.experiments.on_kafka.measure import claim_verdicts, percentile

ROWS = [
    {"configuration": "acks=0", "messages": 3000, "msg/s": 18000, "p50 ms": 1.0, "p99 ms": 2.0},
    {
        "configuration": "acks=1",
        "messages": 3000,
        "msg/s": 20000,
        "p50 ms": 23.3,
        "p99 ms": 40.4,
        "one-at-a-time p50 ms": 1.1,
    },
    {
        "configuration": "acks=all",
        "messages": 3000,
        "msg/s": 20000,
        "p50 ms": 49.7,
        "p99 ms": 57.6,
        "one-at-a-time p50 ms": 4.2,
    },
    {
        "configuration": "acks=all, idempotent",
        "messages": 3000,
        "msg/s": 9000,
        "p50 ms": 114.6,
        "p99 ms": 161.9,
        "one-at-a-time p50 ms": 5.4,
    },
    {"configuration": "transactions of 10", "messages": 530, "msg/s": 265, "p50 ms": 37.3, "p99 ms": 50.9},
    {"configuration": "transactions of 100", "messages": 3000, "msg/s": 2650, "p50 ms": 40.1, "p99 ms": 60.0},
]


def test_verdicts_are_computed_from_the_rows():
    v = claim_verdicts(ROWS)
    assert v["idempotent / plain acks=all throughput"] == 0.45
    assert v["claim 'idempotence has no performance cost'"].startswith("does not hold")
    assert v["claim 'a committed write takes ~10 ms'"].startswith("holds")
    assert v["transactions of 100 / of 10 throughput"] == 10.0
    same = [dict(r, **({"msg/s": 20000} if r["configuration"] == "acks=all, idempotent" else {})) for r in ROWS]
    assert claim_verdicts(same)["claim 'idempotence has no performance cost'"].startswith("holds")


def test_tradeoff_text_hides_acks0_latency():
    text = lab.tradeoff_text(ROWS)
    acks0 = text.splitlines()[1]
    assert acks0.split()[0] == "acks=0" and acks0.split()[-3:] == ["-", "-", "-"]


def test_fidelity_text_counts_agreement():
    # two-column rows (no wire key), as callers before the wire column built them
    rows = [
        {"scenario": "a", "parameters": {"x": 1}, "simulator": ["lost"], "real Kafka": ["lost"], "agree": True},
        {"scenario": "b", "parameters": {}, "simulator": [], "real Kafka": ["duplicate"], "agree": False},
        {
            "scenario": "c",
            "parameters": {},
            "simulator": [],
            "real Kafka": None,
            "agree": None,
            "why not": "c needs the fault(s) ['schedule'] ...",
        },
    ]
    text = fidelity.fidelity_text(rows)
    assert "1 of 2 cases agree on every backend that ran them" in text and " NO" in text
    assert "- b : simulator vs real Kafka: simulator vs Kafka" in text
    assert text.endswith("- real Kafka, c: c needs the fault(s) ['schedule'] ...")


def test_lab_is_skipped_with_the_reason_without_a_jvm(monkeypatch):
    monkeypatch.delenv("KAFKA_BOOTSTRAP_SERVERS", raising=False)

    def missing():
        raise jars.JvmToolMissing("No 'java' found on PATH (Java 17+ is needed).")

    monkeypatch.setattr(jars, "check_jvm_tools", missing)
    kafka, why = lab.start_lab()
    assert kafka is None and "skipped" in why and "Java 17+" in why
    assert lab.stop_lab(None) == "nothing to stop"


def test_percentile():
    assert percentile([], 50) != percentile([], 50)  # NaN
    assert percentile([5, 1, 3], 0) == 1 and percentile([5, 1, 3], 100) == 5


def test_bench_rejects_unknown_names(capsys):
    from bench.__main__ import CHOICES, main

    assert main(["nonsense"]) == 2

    assert f"choose from {', '.join(CHOICES)}" in capsys.readouterr().err


def test_bench_real_without_jvm_says_why(monkeypatch, capsys):
    from bench.__main__ import main

    def missing():
        raise jars.JvmToolMissing("No 'java' found on PATH (Java 17+ is needed).")

    monkeypatch.setattr(jars, "check_jvm_tools", missing)
    assert main(["real"]) == 1
    assert "real-Kafka benchmark skipped" in capsys.readouterr().err


def test_lab_falls_back_to_the_wire_without_a_jvm(monkeypatch):
    monkeypatch.delenv("KAFKA_BOOTSTRAP_SERVERS", raising=False)

    def missing():
        raise jars.JvmToolMissing("No 'mvn' found on PATH.")

    monkeypatch.setattr(jars, "check_jvm_tools", missing)
    kafka, why = fidelity.start_lab(wire_fallback=True)
    try:
        assert fidelity.is_wire(kafka) and fidelity.is_local(kafka)
        assert why.startswith("no real Kafka here (No 'mvn' found on PATH)") and "simulated cluster" in why
        assert kafka.bootstrap_servers in why
    finally:
        assert fidelity.stop_lab(kafka).startswith("stopped the simulated cluster")
    assert not [t for t in threading.enumerate() if t.name.startswith("wire-") and t.is_alive()]
