"""Spark's validation rules agree with the Python reference on every line of the data set."""

import pytest

from course_lib.spark import orders as ref

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]


def test_spark_and_python_classify_every_line_alike(spark):
    from course_lib.spark.pipeline import enrich, parse_and_validate

    lines = ref.read_lines()
    rows = [(line.encode(), 0, i, None) for i, line in enumerate(lines)]
    df = spark.createDataFrame(rows, "value binary, partition int, offset long, timestamp timestamp")
    validated = parse_and_validate(df)
    got = {r["src_offset"]: r["reason"] for r in validated.select("src_offset", "reason").collect()}
    want = {i: ref.validate(line)[0] for i, line in enumerate(lines)}
    assert got == want
    enriched = enrich(validated.where("reason = 'ok'"))
    total = {
        r["account"]: r["cents"]
        for r in enriched.groupBy("account")
        .agg({"signed_cents": "sum"})
        .withColumnRenamed("sum(signed_cents)", "cents")
        .collect()
    }
    assert total == ref.expected(lines)["balances_cents"]
