"""The lab's Structured Streaming pipeline: Kafka in, three sinks out, one checkpoint per sink.

::

    Kafka topic "orders" (read_committed)
        -> parse + validate  --bad-->  dead letters (SQLite, with the store query)
        -> enrich (cents, signed amount, event time, size bucket, source partition/offset)
        -> (a) Spark's Kafka sink       "orders-enriched"      at-least-once
        -> (b) foreachBatch -> SQLite   orders + balances      exactly-once (batchId guard)
        -> (c) Spark's file sink        JSON + _spark_metadata exactly-once

Why the sinks differ after a crash: Spark writes the *offsets* of micro-batch N to the
checkpoint before running it and the *commit* of N after every sink has written. A crash between
the two makes Spark re-run batch N with exactly the same offsets (the Kafka source is
replayable). Whether the sink then holds the batch once or twice is the sink's business:

- the Kafka sink just produces again: duplicates (Spark documents it as at-least-once);
- our foreachBatch writer stores ``batch_id`` in the same SQLite transaction as the rows and the
  balance updates, and skips a batch id it has already committed;
- the file sink keeps its own log (``_spark_metadata/N``) and ignores a batch already in it;
  readers that use that log never see files of a half-written or repeated batch.

Taught in notebooks/10_pyspark_exactly_once_lab.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from course_lib.spark import orders as ref

SINKS = ("kafka", "store", "files")
SINK_SEMANTICS = {"kafka": "at-least-once", "store": "exactly-once", "files": "exactly-once"}
#: How often a foreachBatch query is started on a Spark Connect server whose Python worker was slow.
WORKER_START_ATTEMPTS = 4


@dataclass
class PipelineConfig:
    """Everything one run of the streaming job needs; JSON-serialisable for the job process.

    ``workdir`` holds ``checkpoints/<sink>``, ``store.sqlite``, ``files/`` and ``jvm-tmp/``. Keep
    it between runs to resume; delete it to start over. ``max_offsets_per_trigger`` splits the backlog
    into several micro-batches so that a crash can fall between two of them.

    ``remote``: a Spark Connect URL (``""`` = a local session with ``master``); then ``workdir``
    is a path *on the server* (see :mod:`course_lib.spark.remote`). ``kafka_options``: extra
    ``kafka.*`` options of the source and the Kafka sink (security protocol, SASL login: see
    :func:`course_lib.spark.remote.lab_kafka_settings`).
    """

    bootstrap_servers: str
    workdir: str
    input_topic: str = "orders"
    output_topic: str = "orders-enriched"
    sinks: tuple[str, ...] = SINKS
    master: str = "local[2]"
    max_offsets_per_trigger: int = 100
    # The connector's default (120 s) stalls a batch whose range holds only transaction markers.
    poll_timeout_ms: int = 10_000
    starting_offsets: str = "earliest"
    idempotent_store: bool = True  # False = the naive foreachBatch writer (an exercise)
    # "availableNow" processes the backlog and stops (cells finish). A processing-time
    # trigger such as "2 seconds" keeps running until the job stops it after run_for_s.
    trigger: str = "availableNow"
    run_for_s: float = 30.0
    remote: str = ""
    kafka_options: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "sinks": list(self.sinks)})

    @classmethod
    def from_json(cls, text: str) -> "PipelineConfig":
        d = json.loads(text)
        d["sinks"] = tuple(d["sinks"])
        return cls(**d)

    def checkpoint(self, sink: str) -> Path:
        return Path(self.workdir) / "checkpoints" / sink

    @property
    def store_path(self) -> Path:
        return Path(self.workdir) / "store.sqlite"

    @property
    def files_path(self) -> Path:
        return Path(self.workdir) / "files"

    @property
    def scratch_path(self) -> Path:
        """A local job's JVM temporary files (``spark.local.dir``, ``java.io.tmpdir``): a killed
        JVM cannot delete its own, so they go here, where the harness removes them, not in /tmp."""
        return Path(self.workdir) / "jvm-tmp"


# ---- source, validation, enrichment ---------------------------------------------------------
def read_orders(spark, cfg: PipelineConfig):
    """The Kafka source: replayable, offsets kept in each query's checkpoint (not in Kafka)."""
    return (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", cfg.bootstrap_servers)
        .option("subscribe", cfg.input_topic)
        .option("startingOffsets", cfg.starting_offsets)
        # Only committed transactions: the loader writes transactionally.
        .option("kafka.isolation.level", "read_committed")
        .option("kafkaConsumer.pollTimeoutMs", str(cfg.poll_timeout_ms))
        .option("maxOffsetsPerTrigger", str(cfg.max_offsets_per_trigger))
        .options(**cfg.kafka_options)
        .load()
    )


def parse_and_validate(source):
    """Source rows -> one row per record with ``reason`` ('ok' or why it is bad) and fields.

    The rules are those of :func:`course_lib.spark.orders.validate`, in the same order.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    # Every field as STRING: numbers keep their literal text ("12.30"), so the amount is cast
    # to DECIMAL without ever being a float, and "49,42" stays visible as what it was.
    schema = StructType([StructField(f, StringType()) for f in ref.FIELDS] + [StructField("_corrupt", StringType())])
    parsed = source.select(
        F.col("value").cast("string").alias("raw"),
        F.col("partition").alias("src_partition"),
        F.col("offset").alias("src_offset"),
        F.col("timestamp").alias("kafka_ts"),
    ).withColumn("j", F.from_json("raw", schema, {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": "_corrupt"}))
    j = {f: F.col("j")[f] for f in (*ref.FIELDS, "_corrupt")}
    amount = F.expr("try_cast(j.amount AS DECIMAL(12,2))")
    event_time = F.expr("try_to_timestamp(j.ts, \"yyyy-MM-dd'T'HH:mm:ss.SSSX\")")
    all_null = None
    for f in ref.FIELDS:
        all_null = j[f].isNull() if all_null is None else (all_null & j[f].isNull())
    reason = (
        F.when(F.col("j").isNull() | j["_corrupt"].isNotNull() | all_null, F.lit("not_json"))
        .when(j["order_id"].isNull() | ~j["order_id"].rlike(ref.ORDER_ID_RE), "bad_order_id")
        .when(j["account"].isNull() | (j["account"] == ""), "missing_account")
        .when(j["kind"].isNull() | ~j["kind"].isin(*ref.KINDS), "bad_kind")
        .when(j["amount"].isNull() | ~j["amount"].rlike(ref.AMOUNT_RE) | amount.isNull() | (amount <= 0), "bad_amount")
        .when(j["ts"].isNull() | ~j["ts"].rlike(ref.TS_RE) | event_time.isNull(), "bad_timestamp")
        .otherwise("ok")
    )
    return parsed.select(
        "raw",
        "src_partition",
        "src_offset",
        "kafka_ts",
        reason.alias("reason"),
        j["order_id"].alias("order_id"),
        j["account"].alias("account"),
        j["kind"].alias("kind"),
        amount.alias("amount"),
        event_time.alias("event_time"),
    )


def enrich(valid):
    """Valid orders -> enriched orders (integer cents, signed effect on the balance, buckets)."""
    from pyspark.sql import functions as F

    cents = (F.col("amount") * 100).cast("long")
    return valid.select(
        "order_id",
        "account",
        "kind",
        "amount",
        cents.alias("amount_cents"),
        F.when(F.col("kind") == "order", cents).otherwise(-cents).alias("signed_cents"),
        "event_time",
        F.date_trunc("hour", "event_time").alias("event_hour"),
        F.when(cents < 1000, "small").when(cents < 10000, "medium").otherwise("large").alias("size_bucket"),
        "src_partition",
        "src_offset",
        "kafka_ts",
    )


def dead_letters(validated):
    return validated.where("reason <> 'ok'").select("src_partition", "src_offset", "reason", "raw")


# ---- sinks ----------------------------------------------------------------------------------
def _trigger(writer, cfg: PipelineConfig):
    if cfg.trigger == "availableNow":
        return writer.trigger(availableNow=True)
    return writer.trigger(processingTime=cfg.trigger)


def start_kafka_sink(enriched, cfg: PipelineConfig):
    """(a) Spark's Kafka sink: at-least-once. A re-run batch is produced again."""
    from pyspark.sql import functions as F

    out = enriched.select(F.col("order_id").alias("key"), F.to_json(F.struct(*enriched.columns)).alias("value"))
    writer = (
        out.writeStream.format("kafka")
        .queryName("sink_kafka")
        .option("kafka.bootstrap.servers", cfg.bootstrap_servers)
        .option("topic", cfg.output_topic)
        .option("checkpointLocation", str(cfg.checkpoint("kafka")))
        .options(**cfg.kafka_options)
    )
    return _trigger(writer, cfg).start()


def start_file_sink(enriched, cfg: PipelineConfig):
    """(c) Spark's file sink: exactly-once through its own metadata log ``_spark_metadata``."""
    from pyspark.sql import functions as F

    out = enriched.withColumn("amount", F.col("amount").cast("string"))
    writer = (
        out.writeStream.format("json")
        .queryName("sink_files")
        .option("path", str(cfg.files_path))
        .option("checkpointLocation", str(cfg.checkpoint("files")))
        .outputMode("append")
    )
    return _trigger(writer, cfg).start()


STORE_SCHEMA = """
CREATE TABLE IF NOT EXISTS batches (
    batch_id INTEGER PRIMARY KEY, n_orders INTEGER, n_dead INTEGER, committed_at REAL);
CREATE TABLE IF NOT EXISTS orders (
    batch_id INTEGER, src_partition INTEGER, src_offset INTEGER, order_id TEXT, account TEXT,
    kind TEXT, amount_cents INTEGER, signed_cents INTEGER, event_time TEXT, size_bucket TEXT,
    kafka_ts TEXT, {key});
CREATE TABLE IF NOT EXISTS balances (account TEXT PRIMARY KEY, cents INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS dead_letters (
    batch_id INTEGER, src_partition INTEGER, src_offset INTEGER, reason TEXT, raw TEXT,
    {key});
-- Evidence for the lab: every time Spark handed us a batch id that was already committed.
CREATE TABLE IF NOT EXISTS replays (batch_id INTEGER, seen_at REAL, skipped INTEGER);
"""


def open_store(path: Path, idempotent: bool = True) -> sqlite3.Connection:
    """The external store; ``idempotent`` makes (batch, partition, offset) a key (upserts)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=30)
    key = (
        "PRIMARY KEY (batch_id, src_partition, src_offset)"
        if idempotent
        else "row_id INTEGER PRIMARY KEY AUTOINCREMENT"
    )
    conn.executescript(STORE_SCHEMA.format(key=key))
    return conn


def write_batch_to_store(
    path: Path, batch_id: int, orders: list[dict], dead: list[dict], idempotent: bool = True
) -> bool:
    """Write one micro-batch to SQLite; return False if it was a replay that we skipped.

    Exactly-once needs the check and the writes in *one* transaction: rows, balance updates and
    the ``batches`` row commit together or not at all, so a crash anywhere leaves either the
    whole batch or none of it, and a replay of a committed batch id changes nothing.
    """
    conn = open_store(path, idempotent)
    try:
        with conn:  # BEGIN ... COMMIT (ROLLBACK on error)
            seen = conn.execute("SELECT 1 FROM batches WHERE batch_id=?", (batch_id,)).fetchone()
            if seen:
                conn.execute("INSERT INTO replays VALUES (?,?,?)", (batch_id, time.time(), int(idempotent)))
                if idempotent:
                    return False
            verb = "INSERT OR REPLACE" if idempotent else "INSERT"
            conn.executemany(
                f"{verb} INTO orders (batch_id, src_partition, src_offset, order_id, account, "
                "kind, amount_cents, signed_cents, event_time, size_bucket, kafka_ts) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (
                        batch_id,
                        o["src_partition"],
                        o["src_offset"],
                        o["order_id"],
                        o["account"],
                        o["kind"],
                        o["amount_cents"],
                        o["signed_cents"],
                        str(o["event_time"]),
                        o["size_bucket"],
                        str(o.get("kafka_ts")),
                    )
                    for o in orders
                ],
            )
            conn.executemany(
                f"{verb} INTO dead_letters (batch_id, src_partition, src_offset, reason, raw) VALUES (?,?,?,?,?)",
                [(batch_id, d["src_partition"], d["src_offset"], d["reason"], d["raw"]) for d in dead],
            )
            totals: dict[str, int] = {}
            for o in orders:
                totals[o["account"]] = totals.get(o["account"], 0) + o["signed_cents"]
            conn.executemany(
                "INSERT INTO balances VALUES (?,?) ON CONFLICT(account) DO UPDATE SET cents = cents + excluded.cents",
                sorted(totals.items()),
            )
            conn.execute(
                "INSERT OR REPLACE INTO batches VALUES (?,?,?,?)", (batch_id, len(orders), len(dead), time.time())
            )
        return True
    finally:
        conn.close()


class StoreWriter:
    """The ``foreachBatch`` function of sink (b): ``StoreWriter(path)(batch_df, batch_id)``.

    A class of this module, not a function defined in a notebook: its state is two plain values
    (the store's path and the mode), so it depends on no notebook variable. Spark Connect pickles
    it and runs it in a Python worker *of the server*; :func:`start_store_sink` has it pickled
    by value, so the server needs pyspark but not this course's package.
    """

    def __init__(self, store_path: str, idempotent: bool = True):
        self.store_path = str(store_path)
        self.idempotent = idempotent

    def __call__(self, batch_df, batch_id: int) -> None:
        # Small micro-batches (maxOffsetsPerTrigger): collecting to the driver is fine and keeps
        # the SQLite transaction in one place. A big job would write per partition instead.
        batch_df = batch_df.persist()
        try:
            good = [r.asDict() for r in enrich(batch_df.where("reason = 'ok'")).collect()]
            bad = [r.asDict() for r in dead_letters(batch_df).collect()]
            write_batch_to_store(Path(self.store_path), batch_id, good, bad, self.idempotent)
        finally:
            batch_df.unpersist()

    def __repr__(self) -> str:
        return f"StoreWriter({self.store_path!r}, idempotent={self.idempotent})"


def start_store_sink(validated, cfg: PipelineConfig):
    """(b) foreachBatch into SQLite: exactly-once because the writer is idempotent per batch id.

    Dead letters go to the same store in the same transaction, so they are counted exactly once.
    """
    open_store(cfg.store_path, cfg.idempotent_store).close()
    if cfg.remote:
        # Spark Connect sends the writer to the server with cloudpickle. By default a class is
        # pickled by reference ("import course_lib.spark.pipeline" on the server); by value, its
        # code travels along and any Spark Connect server with pyspark can run it.
        from pyspark import cloudpickle

        cloudpickle.register_pickle_by_value(sys.modules[__name__])
    writer = (
        validated.writeStream.queryName("sink_store")
        .option("checkpointLocation", str(cfg.checkpoint("store")))
        .foreachBatch(StoreWriter(str(cfg.store_path), cfg.idempotent_store))
    )
    if not cfg.remote:
        return _trigger(writer, cfg).start()
    # A Spark Connect server starts one Python worker per foreachBatch query and gives it 10 s
    # (hard-coded in Spark 4.0's PythonWorkerFactory) to import pyspark and connect back; on a
    # busy server (a workshop's learners starting at once; seen here at load 13 on 2 cores) it
    # misses that. The query was not created then, so starting it again is safe.
    attempt = 1
    while True:
        try:
            return _trigger(writer, cfg).start()
        except Exception as exc:
            # "Python worker failed to connect back" (SparkException) / "... to connect back" (cause)
            if "to connect back" not in str(exc) or attempt >= WORKER_START_ATTEMPTS:
                raise
        # Back off: the worker that missed its 10 s is still importing, on the same busy cores.
        time.sleep(5.0 * attempt)
        attempt += 1


def start_pipeline(spark, cfg: PipelineConfig) -> dict:
    """Start one streaming query per sink in ``cfg.sinks``; return ``{sink: StreamingQuery}``.

    Each query has its own checkpoint, so each resumes on its own after a crash. They read the
    topic independently (three consumers) - exactly what three separate jobs would do.
    """
    unknown = set(cfg.sinks) - set(SINKS)
    if unknown:
        raise ValueError(f"unknown sink(s) {sorted(unknown)}; choose from {SINKS}")
    for sink in cfg.sinks:
        cfg.checkpoint(sink).parent.mkdir(parents=True, exist_ok=True)
    validated = parse_and_validate(read_orders(spark, cfg))
    enriched = enrich(validated.where("reason = 'ok'"))
    queries = {}
    if "kafka" in cfg.sinks:
        queries["kafka"] = start_kafka_sink(enriched, cfg)
    if "store" in cfg.sinks:
        queries["store"] = start_store_sink(validated, cfg)
    if "files" in cfg.sinks:
        queries["files"] = start_file_sink(enriched, cfg)
    return queries


def progress_summary(query) -> list[dict]:
    """Per micro-batch: id, input rows, duration and rows/s, from the query's recent progress."""
    rows = []
    for p in query.recentProgress:
        d = p if isinstance(p, dict) else json.loads(p.json)
        rows.append(
            {
                "batch_id": d["batchId"],
                "rows": d.get("numInputRows", 0),
                "duration_ms": d.get("durationMs", {}).get("triggerExecution"),
                "add_batch_ms": d.get("durationMs", {}).get("addBatch"),
                "timestamp": d.get("timestamp"),
            }
        )
    return rows
