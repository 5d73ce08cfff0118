"""The graded exercises: what each one asks for, what type of answer it expects, and how it is
checked - always by running the simulator (or the real cluster / Spark), never by comparing with
a stored solution string.

Kinds: ``predict`` (a number or name measured by a seeded run), ``choose`` (pick a configuration
or option; graded over many seeded fault schedules, so guessing fails), ``implement`` (a function
run by a crash harness and judged by the checker).

Each check takes ``seeds``: the learner's ``check()`` uses :attr:`Exercise.public_seeds`; the
instructor's grader uses other seeds kept in :mod:`course_lib.grading.hidden`, so code tuned to
the public seeds does not pass by luck.

Taught in the Exercises section at the end of notebooks/01 to notebooks/10.
"""

from __future__ import annotations

import functools
import os
import warnings
from dataclasses import dataclass, field
from typing import Callable

from .report import ERROR, FAILED, NOT_ATTEMPTED, PASSED, SKIPPED, WRONG_TYPE, Part, Report


class _Missing:
    def __repr__(self):
        return "<no answer>"


MISSING = _Missing()


# ---- answer types --------------------------------------------------------------------------------
def _stub_code(*args): ...


def is_placeholder(answer) -> bool:
    """An untouched answer: missing, None, ``...``, a dict still holding ``...``, or a function
    whose body is still only ``...`` / ``pass`` / a docstring."""
    if answer is MISSING or answer is None or answer is Ellipsis:
        return True
    if isinstance(answer, dict):
        return any(v is Ellipsis for v in answer.values()) or any(
            isinstance(v, dict) and is_placeholder(v) for v in answer.values()
        )
    code = getattr(answer, "__code__", None)
    return code is not None and code.co_code == _stub_code.__code__.co_code


def _describe(answer) -> str:
    text = repr(answer)
    return f"a {type(answer).__name__}: {text if len(text) < 60 else text[:57] + '...'}"


def expect_int(answer):
    if isinstance(answer, bool) or not isinstance(answer, int):
        return f"expects a whole number (int), such as 4; you gave {_describe(answer)}"


def expect_choice(*choices):
    def expect(answer):
        if not isinstance(answer, str):
            return f"expects one of the strings {', '.join(map(repr, choices))}; you gave {_describe(answer)}"
        if answer not in choices:
            return f"expects one of {', '.join(map(repr, choices))}; {answer!r} is not one of them"

    expect.__doc__ = f"one of {choices}"
    return expect


def expect_set_of(*choices):
    def expect(answer):
        if not isinstance(answer, (set, frozenset, list, tuple)) or not all(isinstance(a, str) for a in answer):
            return (
                f"expects a set of strings taken from {', '.join(map(repr, choices))}, such as "
                f"{{{choices[0]!r}}}; you gave {_describe(answer)}"
            )
        unknown = set(answer) - set(choices)
        if unknown:
            return f"{sorted(unknown)} not among the allowed values {', '.join(map(repr, choices))}"

    return expect


def expect_dict(*keys):
    def expect(answer):
        if not isinstance(answer, dict):
            return (
                f"expects a dict with the keys {', '.join(map(repr, keys))}; you gave {_describe(answer)}"
                if keys
                else f"expects a dict of KafkaProducer settings, such as {{'acks': 'all'}}; you gave "
                f"{_describe(answer)}"
            )
        missing = [k for k in keys if k not in answer]
        if missing:
            return f"the dict is missing the key(s) {', '.join(map(repr, missing))}"
        for k in keys:
            if not isinstance(answer[k], dict):
                return f"answer[{k!r}] should be a dict of settings; you gave {_describe(answer[k])}"

    return expect


def expect_function(n_args: int):
    def expect(answer):
        if not callable(answer):
            return f"expects a function taking {n_args} argument(s); you gave {_describe(answer)}"

    return expect


# ---- the exercise record -------------------------------------------------------------------------
@dataclass
class Exercise:
    id: str
    notebook: str
    kind: str
    question: str
    expect: Callable
    check: Callable  # (answer, seeds) -> list[Part]
    hint: str
    points: float = 1.0
    public_seeds: tuple = (0,)
    #: for "implement": the names the grader takes out of the notebook (functions defined there)
    functions: tuple = field(default_factory=tuple)

    @property
    def is_implementation(self) -> bool:
        return bool(self.functions)


EXERCISES: dict[str, Exercise] = {}


def exercise(**kw):
    def register(fn):
        ex = Exercise(check=fn, **kw)
        EXERCISES[ex.id] = ex
        return fn

    return register


def evaluate(exercise_id: str, answer, seeds=None) -> Report:
    """Grade one answer: not attempted / wrong type / each check part. Never raises for bad
    answers: whatever the learner's code does becomes the report."""
    ex = EXERCISES[exercise_id]
    seeds = tuple(ex.public_seeds if seeds is None else seeds)
    answers = answer if ex.is_implementation else (answer,)
    if any(is_placeholder(a) for a in answers):
        names = ", ".join(ex.functions) if ex.is_implementation else f"`{ex.id}`"
        return Report(
            ex.id,
            NOT_ATTEMPTED,
            0,
            ex.points,
            f"not attempted yet: replace the `...` in {names} with your answer, then run check({ex.id!r}) again.",
        )
    for a in answers:
        problem = ex.expect(a)
        if problem:
            return Report(ex.id, WRONG_TYPE, 0, ex.points, f"{ex.id} {problem}.", ex.hint)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parts = ex.check(*answers, seeds=seeds)
    except NotImplementedError:
        return Report(
            ex.id, NOT_ATTEMPTED, 0, ex.points, "not attempted yet: your function still raises NotImplementedError."
        )
    except Exception as exc:  # the learner's code raised: report it, do not crash the notebook
        return Report(
            ex.id,
            ERROR,
            0,
            ex.points,
            f"your code raised {type(exc).__name__}: {exc}. Run it on its own to see the traceback.",
            ex.hint,
        )
    graded = [p for p in parts if not p.skipped]
    if graded and all(p.passed for p in graded):
        return Report(ex.id, PASSED, ex.points, ex.points, "", ex.hint, parts)
    if not graded:
        return Report(ex.id, SKIPPED, 0, ex.points, "nothing could be graded here (see below)", "", parts)
    return Report(ex.id, FAILED, 0, ex.points, "", ex.hint, parts)


# ---- shared helpers ------------------------------------------------------------------------------
def _quiet():
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("ignore")
    return ctx


def _fault_trials(producer: dict, topic: dict, seeds, kinds=None) -> list:
    from ..scenarios import random_faults

    kw = {"kinds": kinds} if kinds else {}
    return [(s, random_faults(seed=s, producer_config=producer, topic_config=topic, **kw)) for s in seeds]


def _acked_fraction(results) -> float:
    sent = acked = 0
    for _, r in results:
        table = r.result.outcome_table()
        sent += table["sent"]
        acked += table["sent"] - table["not delivered (producer told)"]
    return acked / max(sent, 1)


def _equal(name: str, answer, expected, seed=None, unit="") -> list[Part]:
    if answer == expected:
        return [Part(name, True, seed=seed)]
    direction = "too high" if isinstance(answer, int) and answer > expected else "too low"
    detail = (
        f"your prediction {answer}{unit} is {direction}"
        if isinstance(answer, int)
        else f"{answer!r} is not what the run shows"
    )
    return [Part(name, False, detail + "; run the experiment and look at the evidence", seed)]


# ---- 01 the replicated log -----------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _paused_follower_hw(wait_ms: float) -> tuple[int, int]:
    from ..broker import Cluster
    from ..clients import KafkaProducer

    ctx = _quiet()
    try:
        cluster = Cluster(brokers=3, seed=1, replica_lag_time_max_ms=10_000)
        cluster.create_topic("events", replication_factor=3, min_insync_replicas=1)
        producer = KafkaProducer(bootstrap_servers=cluster, acks=1, enable_idempotence=False)
        for i in range(2):
            producer.send("events", f"m-{i}".encode())
        producer.flush()
        cluster.run_for(100)
        leader = cluster.leader_of("events")
        follower = [b for b in cluster.partition_state("events")["replicas"] if b != leader][0]
        cluster.pause(follower)
        for i in range(2, 5):
            producer.send("events", f"m-{i}".encode())
        producer.flush()
        cluster.run_for(wait_ms)
        state = cluster.partition_state("events")
        return state["replicas"][leader]["hw"], len(state["isr"])
    finally:
        ctx.__exit__(None, None, None)


@exercise(
    id="ex01_q1",
    notebook="01_replicated_log",
    kind="predict",
    expect=expect_int,
    question="acks=1, replication factor 3: 2 records replicated, then one follower pauses and the leader "
    "appends 3 more. What is the high watermark 100 ms later?",
    hint="The high watermark is the smallest log end offset among the replicas in the ISR - and a paused "
    "follower stays in the ISR until replica.lag.time.max.ms passes.",
)
def _ex01_q1(answer, seeds):
    return _equal("high watermark 100 ms after the pause", answer, _paused_follower_hw(100)[0])


@exercise(
    id="ex01_q2",
    notebook="01_replicated_log",
    kind="predict",
    expect=expect_int,
    question="Same run, but 15 s later (replica.lag.time.max.ms is 10 s). What is the high watermark now?",
    hint="After replica.lag.time.max.ms the leader drops the paused follower from the ISR; which replicas "
    "decide the high watermark then?",
)
def _ex01_q2(answer, seeds):
    return _equal("high watermark 15 s after the pause", answer, _paused_follower_hw(15_000)[0])


# ---- 02 acks and durability ----------------------------------------------------------------------
@exercise(
    id="ex02_q1",
    notebook="02_acks_and_durability",
    kind="predict",
    expect=expect_int,
    question="run_scenario('leader_crash_after_ack', seed=3, acks=1): how many acknowledged messages are lost?",
    hint="Count the messages the leader acknowledged while both followers were paused.",
)
def _ex02_q1(answer, seeds):
    from ..scenarios import run_scenario

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lost = len(run_scenario("leader_crash_after_ack", seed=3, acks=1).result.by_kind("lost"))
    return _equal("acknowledged messages lost (seed 3)", answer, lost, seed=3)


@exercise(
    id="ex02_q2",
    notebook="02_acks_and_durability",
    kind="choose",
    expect=expect_dict("producer", "topic"),
    public_seeds=tuple(range(20)),
    question="Choose {'producer': {...}, 'topic': {...}} so that no acknowledged message is ever lost under "
    "random broker faults, while at least 90% of the messages are still acknowledged.",
    hint="Which acks value waits for the followers, and how many in-sync replicas must a write reach so "
    "that one crash cannot take the only copy?",
)
def _ex02_q2(answer, seeds):
    results = _fault_trials(answer["producer"], answer["topic"], seeds)
    parts = [
        Part(
            f"random faults, seed {s}",
            not r.result.by_kind("lost"),
            f"{len(r.result.by_kind('lost'))} acknowledged message(s) lost",
            s,
        )
        for s, r in results
    ]
    fraction = _acked_fraction(results)
    parts.append(
        Part(
            "availability",
            fraction >= 0.9,
            f"only {fraction:.0%} of the messages were acknowledged (90% needed): too strict a setting "
            f"refuses writes instead of storing them safely",
        )
    )
    return parts


# ---- 03 retries, ordering and duplicates ---------------------------------------------------------
@exercise(
    id="ex03_q1",
    notebook="03_retries_ordering_duplicates",
    kind="predict",
    expect=expect_int,
    question="run_scenario('lost_ack_retry', seed=2, idempotent=False): how many messages end up in the log "
    "more than once?",
    hint="Every message of the batch whose ACK was lost is appended again by the retry.",
)
def _ex03_q1(answer, seeds):
    from ..scenarios import run_scenario

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        n = len(run_scenario("lost_ack_retry", seed=2, idempotent=False).result.by_kind("duplicate"))
    return _equal("duplicated messages (seed 2)", answer, n, seed=2)


@exercise(
    id="ex03_q2",
    notebook="03_retries_ordering_duplicates",
    kind="choose",
    expect=expect_dict(),
    public_seeds=tuple(range(20)),
    question="Your brokers do not allow the idempotent producer (enable_idempotence=False is imposed). Choose "
    "the other producer settings so that nothing acknowledged is lost and no message is ever "
    "reordered under random faults.",
    hint="A retried batch can overtake... or be overtaken. How many requests per connection may be in flight "
    "for that to be impossible?",
)
def _ex03_q2(answer, seeds):
    if answer.get("enable_idempotence", False) is not False:
        return [Part("enable_idempotence", False, "the exercise imposes enable_idempotence=False")]
    results = _fault_trials(answer, {"min_insync_replicas": 2}, seeds)
    parts = [
        Part(
            f"random faults, seed {s}",
            not (r.result.by_kind("lost") or r.result.by_kind("reordered")),
            f"{len(r.result.by_kind('lost'))} lost, {len(r.result.by_kind('reordered'))} reordered",
            s,
        )
        for s, r in results
    ]
    fraction = _acked_fraction(results)
    parts.append(Part("availability", fraction >= 0.9, f"only {fraction:.0%} of the messages were acknowledged"))
    return parts


# ---- 04 the idempotent producer ------------------------------------------------------------------
EX04_CHOICES = {
    "A": "the broker forgot the sequence numbers when the ACK was lost",
    "B": "the restarted application got a new producer id, so the broker could not recognise the resend",
    "C": "the producer used acks=1",
}


@exercise(
    id="ex04_q1",
    notebook="04_idempotent_producer",
    kind="predict",
    expect=expect_choice(*EX04_CHOICES),
    question="In run_scenario('producer_restart_gap') an idempotent producer still writes a duplicate. Why? "
    + "; ".join(f"{k}: {v}" for k, v in EX04_CHOICES.items()),
    hint="Look at result.notes['producer_ids'] and result.producer_config.",
)
def _ex04_q1(answer, seeds):
    from ..scenarios import run_scenario

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = run_scenario("producer_restart_gap", seed=0)
    ids = run.notes["producer_ids"]
    truth = (
        "B"
        if ids[0] != ids[1] and run.producer_config.get("acks") == "all" and run.result.by_kind("duplicate")
        else "A"
    )
    return [
        Part(
            "explanation matches the run's evidence",
            answer == truth,
            f"{answer}: {EX04_CHOICES[answer]} - the run's evidence says otherwise",
        )
    ]


# ---- 05 consumer delivery semantics --------------------------------------------------------------
CRASH_POINTS = ("after_poll", "mid_batch", "after_process", "after_commit")


@exercise(
    id="ex05_q1",
    notebook="05_consumer_delivery_semantics",
    kind="predict",
    expect=expect_set_of(*CRASH_POINTS),
    question="An at-most-once consumer (commit, then process) crashes once. At which crash points are "
    "messages lost? Answer with a set of crash point names.",
    hint="Messages are lost when the committed offset is ahead of what was processed at the moment of the crash.",
)
def _ex05_q1(answer, seeds):
    from ..processing import run_pipeline

    truth = {p for p in CRASH_POINTS if "lost_in_processing" in run_pipeline("at-most-once", p, seed=0).result.found}
    parts = []
    for p in CRASH_POINTS:
        ok = (p in answer) == (p in truth)
        parts.append(
            Part(
                f"crash {p}",
                ok,
                f"you said messages are {'' if p in answer else 'not '}lost - the run (seed 0) disagrees",
                0,
            )
        )
    return parts


@exercise(
    id="ex05_q2",
    notebook="05_consumer_delivery_semantics",
    kind="implement",
    expect=expect_function(2),
    functions=("consume_at_least_once",),
    public_seeds=tuple(range(6)),
    points=2,
    question="Write consume_at_least_once(consumer, sink): poll, sink.write(record) every record, commit; "
    "return once a poll returns no records twice in a row. After a crash anywhere, no message may be "
    "never processed.",
    hint="What must already be in the sink when an offset is committed?",
)
def _ex05_q2(fn, seeds):
    from .harness import LoopDidNotStop, run_consumer_loop

    parts = []
    for s in seeds:
        try:
            result = run_consumer_loop(fn, s)
        except LoopDidNotStop:
            parts.append(
                Part(
                    f"crash run, seed {s}",
                    False,
                    "your loop kept polling after the input was drained: return after two empty polls",
                    s,
                )
            )
            continue
        lost = result.by_kind("lost_in_processing")
        parts.append(
            Part(
                f"crash run, seed {s}",
                not lost,
                f"{len(lost)} message(s) never processed: {lost[0].explanation if lost else ''}",
                s,
            )
        )
    return parts


# ---- 06 transactions -----------------------------------------------------------------------------
@exercise(
    id="ex06_q1",
    notebook="06_transactions",
    kind="predict",
    expect=expect_int,
    question="run_scenario('aborted_transaction'): three transactions of 3 records each (commit, abort, "
    "commit). What is the partition's log end offset afterwards?",
    hint="Aborted records stay in the log, and every commit or abort writes a marker that takes an offset.",
)
def _ex06_q1(answer, seeds):
    from ..scenarios import run_scenario

    leo = run_scenario("aborted_transaction", seed=0).notes["log_end_offset"]
    return _equal("log end offset", answer, leo, seed=0)


@exercise(
    id="ex06_q2",
    notebook="06_transactions",
    kind="choose",
    expect=expect_choice("read_committed", "read_uncommitted"),
    question="Which isolation_level must a consumer use so that it never reads the aborted transaction's records?",
    hint="Which records does each isolation level let a consumer see?",
)
def _ex06_q2(answer, seeds):
    from ..scenarios import run_scenario

    run = run_scenario("aborted_transaction", seed=0, isolation_level=answer)
    seen_aborted = [v for _, v in run.notes["seen"] if v.startswith("b-")]
    return [Part("consumer run", not seen_aborted, f"with {answer} the consumer read {seen_aborted}", 0)]


@exercise(
    id="ex06_q3",
    notebook="06_transactions",
    kind="implement",
    expect=expect_function(3),
    functions=("process_batch",),
    public_seeds=tuple(range(5)),
    points=3,
    question="Write process_batch(consumer, producer, records), the heart of a consume-transform-produce "
    "application: send every record's value to the topic 'output' and commit the consumed offsets "
    "in the same transaction. The application dies at seeded points and restarts with the same "
    "transactional_id: the committed output must hold every input exactly once.",
    hint="begin_transaction(), send, then send_offsets_to_transaction(next offsets, consumer.group_metadata()) "
    "before commit_transaction(): offsets committed outside the transaction can disagree with it.",
)
def _ex06_q3(process_batch, seeds):
    from .harness import run_transform_loop

    parts = []
    for s in seeds:
        result = run_transform_loop(process_batch, s)
        lost, dup = result.by_kind("lost_in_processing"), result.by_kind("duplicate_processing")
        detail = f"{len(lost)} never processed, {len(dup)} processed twice (committed output)"
        if lost or dup:
            detail += f"; first: {(lost or dup)[0].explanation}"
        parts.append(Part(f"crash run, seed {s}", not (lost or dup), detail, s))
    return parts


# ---- 07 exactly-once into external systems -------------------------------------------------------
@exercise(
    id="ex07_q1",
    notebook="07_exactly_once_external",
    kind="implement",
    expect=expect_function(2),
    functions=("store", "resume_positions"),
    public_seeds=tuple(range(6)),
    points=3,
    question="Write store(db, record) and resume_positions(db) so that the output table has every input "
    "message exactly once, however often the application dies between SQL statements.",
    hint="The output row and the next offset must commit together (BEGIN ... COMMIT), and a restart must "
    "start from the stored offsets, not Kafka's.",
)
def _ex07_q1(store, resume_positions, seeds):
    from .harness import run_external_store

    parts = []
    for s in seeds:
        result = run_external_store(store, resume_positions, s)
        bad = result.by_kind("lost_in_processing") + result.by_kind("duplicate_processing")
        parts.append(
            Part(
                f"crash run, seed {s}",
                not bad,
                f"{len(result.by_kind('lost_in_processing'))} never processed, "
                f"{len(result.by_kind('duplicate_processing'))} processed twice",
                s,
            )
        )
    return parts


# ---- 08 claims from the articles -----------------------------------------------------------------
@exercise(
    id="ex08_q1",
    notebook="08_claims_tested",
    kind="choose",
    expect=expect_choice(
        "leader_crash_after_ack",
        "not_enough_replicas",
        "lost_ack_retry",
        "retries_reorder",
        "unclean_election",
        "fire_and_forget_crash",
        "producer_restart_gap",
    ),
    question="Refute the claim 'acks=all gives exactly-once': name a scenario that, run with its defaults "
    "(seed 0), uses acks='all' and still shows a duplicate.",
    hint="acks decides when a write counts as durable; what happens when the answer to a durable write is lost?",
)
def _ex08_q1(answer, seeds):
    from ..scenarios import run_scenario

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = run_scenario(answer, seed=0)
    acks_all = run.producer_config.get("acks", "all") in ("all", -1)
    return [
        Part("uses acks='all'", acks_all, f"{answer} runs with acks={run.producer_config.get('acks')!r}", 0),
        Part(
            "shows a duplicate",
            "duplicate" in run.result.found,
            f"{answer} shows {sorted(run.result.found) or 'no anomaly'}",
            0,
        ),
    ]


# ---- 09 real Kafka lab ---------------------------------------------------------------------------
@exercise(
    id="ex09_q1",
    notebook="09_real_kafka_lab",
    kind="choose",
    expect=expect_dict(),
    public_seeds=tuple(range(10)),
    question="Give the kafka-python KafkaProducer settings (a dict) you would use in production so that "
    "nothing acknowledged is lost, nothing is duplicated and per-partition order holds.",
    hint="Three settings matter: how many replicas acknowledge, whether retries are deduplicated, and "
    "whether anything caps that.",
)
def _ex09_q1(answer, seeds):
    unknown = [k for k in answer if k not in _producer_keys()]
    if unknown:
        return [Part("settings exist in kafka-python", False, f"unknown KafkaProducer setting(s) {unknown}")]
    results = _fault_trials(answer, {"min_insync_replicas": 2}, seeds)
    parts = [Part(f"simulator, seed {s}", not r.result.found, f"found {sorted(r.result.found)}", s) for s, r in results]
    parts.append(_real_kafka_part(answer))
    return parts


def _producer_keys() -> set:
    from kafka import KafkaProducer as RealProducer

    return set(RealProducer.DEFAULT_CONFIG)


def _real_kafka_part(config: dict) -> Part:
    """Cheap real check: 20 messages through the cluster named by COURSE_KAFKA_BOOTSTRAP, read back
    once each and in order. Without a cluster it is skipped, with a message saying how to run it."""
    bootstrap = os.environ.get("COURSE_KAFKA_BOOTSTRAP")
    if not bootstrap:
        return Part(
            "real Kafka",
            True,
            "skipped: no cluster. Start the lab's cluster (notebooks/09) and set "
            "COURSE_KAFKA_BOOTSTRAP=host:port to grade this part against it",
            skipped=True,
        )
    import uuid

    from kafka import KafkaConsumer as RealConsumer
    from kafka import KafkaProducer as RealProducer

    topic = f"graded-{uuid.uuid4().hex[:8]}"
    try:  # replicated like the lab's topics; a cluster that auto-creates topics works without this
        from kafka.admin import KafkaAdminClient, NewTopic

        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        admin.create_topics([NewTopic(topic, 1, min(3, len(admin.describe_cluster()["brokers"])))])
        admin.close()
    except Exception:
        pass
    producer = RealProducer(bootstrap_servers=bootstrap, **config)
    values = [f"m-{i}".encode() for i in range(20)]
    for v in values:
        producer.send(topic, v, partition=0)
    producer.flush(timeout=30)
    producer.close()
    consumer = RealConsumer(
        topic,
        bootstrap_servers=bootstrap,
        auto_offset_reset="earliest",
        consumer_timeout_ms=5000,
        isolation_level="read_committed",
    )
    got = [r.value for r in consumer]
    consumer.close()
    return Part(
        "real Kafka",
        got == values,
        f"read back {len(got)} of {len(values)} messages "
        f"({'out of order or duplicated' if sorted(set(got)) != got else 'missing some'})",
    )


# ---- 10 PySpark exactly-once lab -----------------------------------------------------------------
@exercise(
    id="ex10_q1",
    notebook="10_pyspark_exactly_once_lab",
    kind="implement",
    expect=expect_function(3),
    functions=("write_batch",),
    public_seeds=tuple(range(5)),
    points=2,
    question="Write write_batch(batch_df, batch_id, db), the foreachBatch writer: insert every row's "
    "(key, value) into the orders table so that a replayed batch (same batch_id, after a crash or "
    "a restart from the checkpoint) changes nothing.",
    hint="Remember which batch ids are already written - in the same transaction as the rows.",
)
def _ex10_q1(write_batch, seeds):
    from .spark_check import replay_batches, spark_part

    parts = []
    for s in seeds:
        ok, detail = replay_batches(write_batch, s)
        parts.append(Part(f"replayed batches, seed {s}", ok, detail, s))
    parts.append(spark_part(write_batch))
    return parts
