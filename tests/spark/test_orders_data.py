"""The data set, its generator and the Python reference rules (no Spark needed)."""

import json
import subprocess
import sys

from course_lib.spark import orders as ref

DATA = ref.DATASET_DIR


def test_generator_is_seeded_and_reproduces_the_committed_file(tmp_path):
    subprocess.run([sys.executable, str(DATA / "generate.py"), "--out", str(tmp_path)], check=True, capture_output=True)
    assert (tmp_path / "orders.jsonl").read_bytes() == (DATA / "orders.jsonl").read_bytes()
    assert (tmp_path / "manifest.json").read_text() == (DATA / "manifest.json").read_text()


def test_committed_file_is_small():
    assert (DATA / "orders.jsonl").stat().st_size < 1_000_000


def test_reference_rules_match_the_manifest():
    manifest = json.loads((DATA / "manifest.json").read_text())
    exp = ref.expected(ref.read_lines())
    assert [(b["line"], b["reason"]) for b in exp["bad"]] == [(b["line"], b["reason"]) for b in manifest["malformed"]]
    assert exp["balances_cents"] == manifest["balances_cents"]
    assert len(exp["valid_ids"]) == manifest["valid"] == len(set(exp["valid_ids"]))
    assert {b["reason"] for b in exp["bad"]} == set(ref.REASONS)


def test_a_different_seed_gives_a_different_stream(tmp_path):
    sys.path.insert(0, str(DATA))
    try:
        import generate
    finally:
        sys.path.remove(str(DATA))
    a, _ = generate.generate(n=200, seed=1, n_malformed=3)
    b, _ = generate.generate(n=200, seed=2, n_malformed=3)
    assert a != b and len(a) == len(b) == 200
