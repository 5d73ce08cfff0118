"""The foreachBatch writer's idempotence and the sink readers, without Spark or Kafka."""

import json

from course_lib.spark import outcome
from course_lib.spark.pipeline import write_batch_to_store


def _orders(n, start=0):
    return [
        {
            "src_partition": 0,
            "src_offset": start + i,
            "order_id": f"o-{start + i:06d}",
            "account": "acct-001",
            "kind": "order",
            "amount_cents": 100,
            "signed_cents": 100,
            "event_time": "2026-01-05 09:00:00",
            "size_bucket": "small",
        }
        for i in range(n)
    ]


def test_replayed_batch_id_is_skipped_by_the_idempotent_writer(tmp_path):
    db = tmp_path / "s.sqlite"
    dead = [{"src_partition": 0, "src_offset": 99, "reason": "not_json", "raw": "x"}]
    assert write_batch_to_store(db, 0, _orders(3), dead) is True
    assert write_batch_to_store(db, 0, _orders(3), dead) is False  # the replay
    store = outcome.read_store(db)
    assert len(store["orders"]) == 3 and len(store["dead_letters"]) == 1
    assert store["balances_cents"] == {"acct-001": 300}
    assert [r["batch_id"] for r in store["replays"]] == [0]


def test_naive_writer_duplicates_on_replay(tmp_path):
    db = tmp_path / "naive.sqlite"
    write_batch_to_store(db, 0, _orders(3), [], idempotent=False)
    write_batch_to_store(db, 0, _orders(3), [], idempotent=False)
    store = outcome.read_store(db)
    assert len(store["orders"]) == 6 and store["balances_cents"] == {"acct-001": 600}


def test_file_sink_reader_trusts_only_the_metadata_log(tmp_path):
    (tmp_path / "_spark_metadata").mkdir()
    good, orphan = tmp_path / "part-00000-a.json", tmp_path / "part-00000-b.json"
    good.write_text(json.dumps({"order_id": "o-000001"}) + "\n")
    orphan.write_text(json.dumps({"order_id": "o-000001"}) + "\n")
    (tmp_path / "_spark_metadata" / "0").write_text(
        "v1\n" + json.dumps({"path": f"file://{good}", "action": "add"}) + "\n"
    )
    assert [r["order_id"] for r in outcome.read_file_sink(tmp_path)] == ["o-000001"]
    assert len(outcome.read_file_sink_naively(tmp_path)) == 2


def test_batch_ranges_from_the_offsets_log(tmp_path):
    off = tmp_path / "offsets"
    off.mkdir()
    (off / "0").write_text('v1\n{"batchWatermarkMs":0}\n{"orders":{"0":5,"1":3}}\n')
    (off / "1").write_text('v1\n{"batchWatermarkMs":0}\n{"orders":{"0":9,"1":3}}\n')
    ranges = outcome.batch_ranges(tmp_path)
    assert ranges == {0: {0: (0, 5), 1: (0, 3)}, 1: {0: (5, 9), 1: (3, 3)}}
    assert outcome.batch_of(ranges, 0, 6) == 1 and outcome.batch_of(ranges, 1, 3) is None


def test_commit_traps_are_not_commits(tmp_path):
    (tmp_path / "commits").mkdir()
    (tmp_path / "commits" / "0").write_text('v1\n{"nextBatchWatermarkMs":0}')
    (tmp_path / "commits" / "1").touch()
    assert outcome.committed_batches(tmp_path) == [0]
