"""The graded exercises: what each one asks for, what type of answer it expects, and how it is
checked - always by running the simulator (or the real cluster / Spark), never by comparing with
a stored solution string.

Kinds: ``predict`` (a number or set the learner works out *before* running anything, about a
configuration no notebook prints - :attr:`Exercise.copied` is the printed answer a copier would
give, and tests/test_grading_predict.py checks that it fails), ``choose`` (pick a configuration
or option; graded over many seeded fault schedules, so guessing fails), ``read`` (read a run's
history and explain it), ``implement`` (a function run by a crash harness and judged by the
checker).

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
    #: for "predict": the answer a learner gets by copying what a notebook prints (a neighbouring
    #: configuration), and where it is printed; the check must reject it
    copied: Callable[[], object] | None = None
    copied_from: str = ""

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
    # never "too high" / "too low": that would let a learner binary-search the number to predict
    detail = (
        f"your prediction {answer}{unit} is not what the run shows"
        if isinstance(answer, int)
        else (f"{answer!r} is not what the run shows")
    )
    return [Part(name, False, detail + "; run the experiment and look at the evidence", seed)]


def predicted(name: str, answer, measure: Callable[[int], object], seeds) -> list[Part]:
    """One part per seed: the prediction against what the simulator measures with that seed (the
    grader's hidden seeds included, so the answer must hold for any run, not one printed run)."""
    return [part for s in seeds for part in _equal(f"{name}, seed {s}", answer, measure(s), seed=s)]


# ---- 01 the replicated log -----------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def paused_follower_state(
    wait_ms: float, before: int = 2, after: int = 3, seed: int = 1, brokers: int = 3, paused: int = 1, lag_ms=10_000
) -> tuple[int, int]:
    """acks=1, replication factor ``brokers``: ``before`` records replicated, then ``paused``
    followers pause and the leader appends ``after`` more; (high watermark, ISR size) ``wait_ms``
    later. The exercise notebook prints this for before=2, after=3 (the lesson's experiment)."""
    from ..broker import Cluster
    from ..clients import KafkaProducer

    ctx = _quiet()
    try:
        cluster = Cluster(brokers=brokers, seed=seed, replica_lag_time_max_ms=lag_ms)
        cluster.create_topic("events", replication_factor=brokers, min_insync_replicas=1)
        producer = KafkaProducer(bootstrap_servers=cluster, acks=1, enable_idempotence=False)
        for i in range(before):
            producer.send("events", f"m-{i}".encode())
        producer.flush()
        cluster.run_for(100)
        leader = cluster.leader_of("events")
        for follower in [b for b in cluster.partition_state("events")["replicas"] if b != leader][:paused]:
            cluster.pause(follower)
        for i in range(before, before + after):
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
    public_seeds=(1, 2),
    question="acks=1, replication factor 3: 4 records replicated, then one follower pauses and the leader "
    "appends 6 more. What is the high watermark 100 ms later?",
    hint="The high watermark is the smallest log end offset among the replicas in the ISR - and a paused "
    "follower stays in the ISR until replica.lag.time.max.ms passes.",
    copied=lambda: paused_follower_state(100)[0],
    copied_from="the experiment cell of exercises/01 (2 records, then 3)",
)
def _ex01_q1(answer, seeds):
    return predicted(
        "high watermark 100 ms after the pause", answer, lambda s: paused_follower_state(100, 4, 6, s)[0], seeds
    )


@exercise(
    id="ex01_q2",
    notebook="01_replicated_log",
    kind="predict",
    expect=expect_int,
    public_seeds=(1, 2),
    question="Same run (4 records, then 6), but 15 s later (replica.lag.time.max.ms is 10 s). What is the high "
    "watermark now?",
    hint="After replica.lag.time.max.ms the leader drops the paused follower from the ISR; which replicas "
    "decide the high watermark then?",
    copied=lambda: paused_follower_state(15_000)[0],
    copied_from="lesson 01's run of the 2-then-3 experiment, 15 s after the pause",
)
def _ex01_q2(answer, seeds):
    return predicted(
        "high watermark 15 s after the pause", answer, lambda s: paused_follower_state(15_000, 4, 6, s)[0], seeds
    )


@exercise(
    id="ex01_q3",
    notebook="01_replicated_log",
    kind="predict",
    expect=expect_int,
    public_seeds=(1, 2),
    question="Replication factor 5 this time: 4 records replicated, then TWO followers pause and the leader "
    "appends 6 more. How many replicas are in the ISR 15 s later?",
    hint="Which replicas keep fetching? The leader counts itself.",
    copied=lambda: paused_follower_state(15_000)[1],
    copied_from="the ISR of the replication-factor-3 run with one paused follower",
)
def _ex01_q3(answer, seeds):
    return predicted(
        "ISR size 15 s after the pause",
        answer,
        lambda s: paused_follower_state(15_000, 4, 6, s, brokers=5, paused=2)[1],
        seeds,
    )


def _isr_never_shrinks(lag_ms: int, seed: int) -> bool:
    """A healthy cluster under steady writes for 10 s: does the ISR stay complete?"""
    from ..broker import Cluster
    from ..clients import KafkaProducer

    ctx = _quiet()
    try:
        cluster = Cluster(brokers=3, seed=seed, replica_lag_time_max_ms=lag_ms)
        cluster.create_topic("events", replication_factor=3, min_insync_replicas=1)
        producer = KafkaProducer(bootstrap_servers=cluster, acks=1, enable_idempotence=False)
        for i in range(100):
            producer.send("events", f"m-{i}".encode())
            producer.flush()
            cluster.run_for(100)
            if len(cluster.partition_state("events")["isr"]) < 3:
                return False
        return True
    finally:
        ctx.__exit__(None, None, None)


@exercise(
    id="ex01_q4",
    notebook="01_replicated_log",
    kind="choose",
    expect=expect_int,
    public_seeds=(1, 2, 3),
    question="Choose replica_lag_time_max_ms (an int, in ms) so that, with acks=1, the high watermark "
    "moves on within 3 s after a follower stops (4 records, then 6, as in ex01_q1), while a healthy "
    "follower is never dropped from the ISR under steady writes.",
    hint="Too large and the leader waits for a follower that is gone; too small and a follower that "
    "fetches normally is dropped between two of its fetches. Try a few values in the experiment cell.",
)
def _ex01_q4(answer, seeds):
    if answer <= 0:
        return [Part("a positive lag", False, f"replica_lag_time_max_ms={answer} is not a duration")]
    parts = []
    for s in seeds:
        hw = paused_follower_state(3000, 4, 6, s, lag_ms=answer)[0]
        parts.append(Part(f"stopped follower, seed {s}", hw == 10, f"the high watermark is still {hw} after 3 s", s))
        parts.append(
            Part(
                f"healthy followers, seed {s}",
                _isr_never_shrinks(answer, s),
                f"with {answer} ms a healthy follower left the ISR between two fetches",
                s,
            )
        )
    return parts


# ---- 02 acks and durability ----------------------------------------------------------------------
def _scenario(name: str, seed: int, **params):
    from ..scenarios import run_scenario

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_scenario(name, seed=seed, **params)


@exercise(
    id="ex02_q1",
    notebook="02_acks_and_durability",
    kind="predict",
    expect=expect_int,
    public_seeds=(0, 1),
    question="run_scenario('unclean_election', messages=8, unclean=True): the lone leader acknowledges 8 "
    "writes, crashes, and an out-of-sync follower is elected. How many acknowledged messages are lost "
    "(for any seed)?",
    hint="Which of the acknowledged writes ever reached the follower that now leads?",
    copied=lambda: len(_scenario("unclean_election", 1, unclean=True).result.by_kind("lost")),
    copied_from="lesson 02's unclean_election run (5 messages)",
)
def _ex02_q1(answer, seeds):
    return predicted(
        "acknowledged messages lost",
        answer,
        lambda s: len(_scenario("unclean_election", s, unclean=True, messages=8).result.by_kind("lost")),
        seeds,
    )


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


@exercise(
    id="ex02_q3",
    notebook="02_acks_and_durability",
    kind="predict",
    expect=expect_int,
    public_seeds=(0, 1),
    question="run_scenario('not_enough_replicas', acks='all', min_insync_replicas=1): both followers crash "
    "and the ISR shrinks to the leader. How many of the 5 sends does the application see fail?",
    hint="min.insync.replicas is the smallest ISR a write with acks='all' accepts.",
    copied=lambda: _scenario("not_enough_replicas", 1).notes["failed"],
    copied_from="lesson 02's not_enough_replicas run (min_insync_replicas=2)",
)
def _ex02_q3(answer, seeds):
    return predicted(
        "failed sends",
        answer,
        lambda s: _scenario("not_enough_replicas", s, acks="all", min_insync_replicas=1).notes["failed"],
        seeds,
    )


ACKS_CHOICES = {"0": 0, "1": 1, "all": "all"}


@exercise(
    id="ex02_q4",
    notebook="02_acks_and_durability",
    kind="choose",
    expect=expect_choice(*ACKS_CHOICES),
    public_seeds=tuple(range(5)),
    question="The followers stall and the leader crashes right after acknowledging (leader_crash_after_ack). "
    "Which acks setting ('0', '1' or 'all') loses no acknowledged message?",
    hint="Which setting makes the leader wait for the followers before it answers?",
)
def _ex02_q4(answer, seeds):
    parts = []
    for s in seeds:
        lost = _scenario("leader_crash_after_ack", s, acks=ACKS_CHOICES[answer]).result.by_kind("lost")
        parts.append(Part(f"leader crash, seed {s}", not lost, f"acks={answer}: {len(lost)} acknowledged lost", s))
    return parts


# ---- 03 retries, ordering and duplicates ---------------------------------------------------------
@functools.lru_cache(maxsize=None)
def lost_ack_log(batch: int, seed: int = 1, idempotent: bool = False, retries=None) -> tuple[str, ...]:
    """One record, then a batch of ``batch`` records whose ACK is lost (acks='all'); the values
    the partition holds afterwards. Lesson 03 prints it for one record."""
    from ..broker import Cluster
    from ..clients import KafkaProducer

    ctx = _quiet()
    try:
        cluster = Cluster(brokers=3, seed=seed)
        cluster.create_topic("events", min_insync_replicas=2)
        extra = {} if retries is None else {"retries": retries}
        producer = KafkaProducer(
            bootstrap_servers=cluster, acks="all", enable_idempotence=idempotent, request_timeout_ms=500, **extra
        )
        producer.send("events", b"m-0")
        producer.flush()
        cluster.lose_next_ack(producer.node_id)
        for i in range(1, batch + 1):  # no flush in between: one batch, one request
            producer.send("events", f"m-{i}".encode())
        producer.flush()
        cluster.final_read("events")
        return tuple(v.decode() for _, _, v in cluster.committed_records("events"))
    finally:
        ctx.__exit__(None, None, None)


def _duplicates(values) -> int:
    return len(values) - len(set(values))


@exercise(
    id="ex03_q1",
    notebook="03_retries_ordering_duplicates",
    kind="predict",
    expect=expect_int,
    public_seeds=(1, 2),
    question="acks='all', idempotence off: one record is written, then ONE batch of 6 records whose ACK is "
    "lost; the producer retries it. How many messages end up in the log more than once?",
    hint="A retry resends the whole batch, and the broker had appended all of it the first time.",
    copied=lambda: _duplicates(lost_ack_log(1)),
    copied_from="lesson 03's lost-ACK run (a batch of one record)",
)
def _ex03_q1(answer, seeds):
    return predicted("duplicated messages", answer, lambda s: _duplicates(lost_ack_log(6, s)), seeds)


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


@exercise(
    id="ex03_q3",
    notebook="03_retries_ordering_duplicates",
    kind="predict",
    expect=expect_int,
    public_seeds=(0, 1),
    question="Idempotence off, retries on: what is the SMALLEST max_in_flight_requests_per_connection at "
    "which run_scenario('retries_reorder') writes the messages out of order?",
    hint="For a retried request to land behind a later one, how many requests must have been on the "
    "connection at the same time?",
    copied=lambda: 5,  # lesson 03 prints max_in_flight=5 (reordered) and 1 (in order)
    copied_from="lesson 03's retries_reorder runs (max_in_flight 5 and 1)",
)
def _ex03_q3(answer, seeds):
    def reordered(s, n):
        return n >= 1 and bool(_scenario("retries_reorder", s, max_in_flight=n).result.by_kind("reordered"))

    parts = []
    for s in seeds:
        ok = reordered(s, answer) and not reordered(s, answer - 1)
        # the same words either way: "still holds" / "a smaller value" would point up or down
        detail = f"{answer} is not the smallest value at which this run reorders; run it with a few values"
        parts.append(Part(f"retries_reorder, seed {s}", ok, detail, s))
    return parts


@exercise(
    id="ex03_q4",
    notebook="03_retries_ordering_duplicates",
    kind="predict",
    expect=expect_int,
    public_seeds=(1, 2),
    question="Same lost ACK, but retries=0 and a batch of 5 records: the application's future fails. How many "
    "of those 5 records are in the log anyway?",
    hint="The ACK was lost, not the request: what had the broker done before answering?",
    copied=lambda: len(lost_ack_log(1, retries=0)) - 1,
    copied_from="lesson 03's retries=0 run (a batch of one record)",
)
def _ex03_q4(answer, seeds):
    return predicted(
        "records of the failed batch in the log", answer, lambda s: len(lost_ack_log(5, s, retries=0)) - 1, seeds
    )


# ---- 04 the idempotent producer ------------------------------------------------------------------
EX04_CHOICES = {
    "A": "the broker forgot the sequence numbers when the ACK was lost",
    "B": "the restarted application got a new producer id, so the broker could not recognise the resend",
    "C": "the producer used acks=1",
}


@exercise(
    id="ex04_q1",
    notebook="04_idempotent_producer",
    kind="read",
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


@exercise(
    id="ex04_q2",
    notebook="04_idempotent_producer",
    kind="predict",
    expect=expect_int,
    public_seeds=(1, 2),
    question="Idempotence ON: one record, then a batch of 6 records whose ACK is lost and which the producer "
    "retries. What is the partition's log end offset afterwards?",
    hint="The broker recognises the retried batch by its producer id and sequence numbers.",
    copied=lambda: len(lost_ack_log(3, idempotent=True)),
    copied_from="lesson 04's run (3 records, then one whose ACK is lost: 4 in the log)",
)
def _ex04_q2(answer, seeds):
    return predicted("log end offset", answer, lambda s: len(lost_ack_log(6, s, idempotent=True)), seeds)


@exercise(
    id="ex04_q3",
    notebook="04_idempotent_producer",
    kind="choose",
    expect=expect_dict(),
    public_seeds=tuple(range(10)),
    question="Choose KafkaProducer settings (a dict) so that lost ACKs, lost requests and leader crashes "
    "never duplicate, lose or reorder an acknowledged message.",
    hint="One setting deduplicates retries; it needs the strongest acks.",
)
def _ex04_q3(answer, seeds):
    kinds = ("lose_ack", "lose_request", "crash_leader")
    results = _fault_trials(answer, {"min_insync_replicas": 2}, seeds, kinds=kinds)
    return [
        Part(f"random faults, seed {s}", not r.result.found, f"found {sorted(r.result.found)}", s) for s, r in results
    ]


# ---- 05 consumer delivery semantics --------------------------------------------------------------
CRASH_POINTS = ("after_poll", "mid_batch", "after_process", "after_commit")


def _lossy_points(semantics: str, seed: int, buffered: bool) -> set:
    from ..processing import run_pipeline

    return {
        p
        for p in CRASH_POINTS
        if "lost_in_processing" in run_pipeline(semantics, p, seed=seed, buffered=buffered).result.found
    }


@exercise(
    id="ex05_q1",
    notebook="05_consumer_delivery_semantics",
    kind="predict",
    expect=expect_set_of(*CRASH_POINTS),
    public_seeds=(0,),
    question="An auto-commit consumer that hands each poll's records to a worker queue (processed one poll "
    "later: run_pipeline(..., buffered=True)) crashes once. At which crash points are messages never "
    "processed? Answer with a set of crash point names.",
    hint="Auto-commit commits what the last poll returned - whether or not the worker has processed it.",
    copied=lambda: {"after_poll"},
    copied_from="lesson 05's one buffered auto-commit run (crash after_poll)",
)
def _ex05_q1(answer, seeds):
    parts = []
    for s in seeds:
        truth = _lossy_points("auto-commit", s, buffered=True)
        wrong = sorted(set(answer) ^ truth)
        parts.append(
            Part(
                f"crash points, seed {s}",
                not wrong,
                f"wrong about {', '.join(wrong)}: for each, ask what the committed offset covers at that moment",
                s,
            )
        )
    return parts


def _consumer_loop_parts(fn, seeds, semantics: str, bad: str, what: str, crash: bool = True) -> list[Part]:
    from .harness import LoopDidNotStop, run_consumer_loop

    parts = []
    for s in seeds:
        name = f"{'crash' if crash else 'no-crash'} run, seed {s}"
        try:
            result = run_consumer_loop(fn, s, semantics=semantics, crash=crash)
        except LoopDidNotStop:
            parts.append(Part(name, False, LoopDidNotStop.message, s))
            continue
        found = result.by_kind(bad)
        parts.append(
            Part(name, not found, f"{len(found)} message(s) {what}: {found[0].explanation if found else ''}", s)
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
    return _consumer_loop_parts(fn, seeds, "at-least-once", "lost_in_processing", "never processed")


@exercise(
    id="ex05_q3",
    notebook="05_consumer_delivery_semantics",
    kind="implement",
    expect=expect_function(2),
    functions=("consume_at_most_once",),
    public_seeds=tuple(range(4)),
    points=2,
    question="Write consume_at_most_once(consumer, sink): same loop, but no message may ever be processed "
    "twice, whatever the crash; without a crash, every message is processed once.",
    hint="Which must come first for a record: the commit that covers it, or its write to the sink?",
)
def _ex05_q3(fn, seeds):
    return _consumer_loop_parts(
        fn, seeds, "at-most-once", "duplicate_processing", "processed twice"
    ) + _consumer_loop_parts(fn, seeds[:2], "at-most-once", "lost_in_processing", "never processed", crash=False)


# ---- 06 transactions -----------------------------------------------------------------------------
TX_PLAN = (True, False, True, False, True)  # commit, abort, commit, abort, commit


@functools.lru_cache(maxsize=None)
def transaction_log(plan: tuple, per_transaction: int, seed: int = 1) -> tuple[int, int]:
    """A transactional producer runs one transaction of ``per_transaction`` records per entry of
    ``plan`` (True: commit, False: abort); (log end offset, records a read_uncommitted consumer
    reads). Lesson 06 prints them for (commit, abort, commit) x 3 records."""
    from ..backend import open_backend

    ctx = _quiet()
    try:
        b = open_backend(None, seed)
        topic = b.create_topic("events", replication_factor=3, min_insync_replicas=2, partitions=1)
        producer = b.producer(transactional_id=b.transactional_id("writer"))
        producer.init_transactions()
        for n, commit in enumerate(plan):
            producer.begin_transaction()
            for i in range(per_transaction):
                producer.send(topic, f"t{n}-{i}".encode())
            producer.flush()
            producer.commit_transaction() if commit else producer.abort_transaction()
        consumer = b.consumer(isolation_level="read_uncommitted", auto_offset_reset="earliest", client_id="reader")
        consumer.assign([(topic, 0)])
        seen = sum(len(rs) for _ in range(5) for rs in consumer.poll(timeout_ms=200).values())
        return b.end_offset(topic), seen
    finally:
        ctx.__exit__(None, None, None)


@exercise(
    id="ex06_q1",
    notebook="06_transactions",
    kind="predict",
    expect=expect_int,
    public_seeds=(0, 1),
    question="Five transactions of 2 records each: commit, abort, commit, abort, commit. What is the "
    "partition's log end offset afterwards?",
    hint="Aborted records stay in the log, and every commit or abort writes a marker that takes an offset.",
    copied=lambda: transaction_log((True, False, True), 3)[0],
    copied_from="lesson 06's aborted_transaction run (3 transactions of 3 records)",
)
def _ex06_q1(answer, seeds):
    return predicted("log end offset", answer, lambda s: transaction_log(TX_PLAN, 2, s)[0], seeds)


@exercise(
    id="ex06_q4",
    notebook="06_transactions",
    kind="predict",
    expect=expect_int,
    public_seeds=(0, 1),
    question="Same five transactions. How many records does a read_uncommitted consumer read from offset 0?",
    hint="read_uncommitted reads aborted records too - but is a marker a record the application sees?",
    copied=lambda: transaction_log((True, False, True), 3)[1],
    copied_from="lesson 06's read_uncommitted run (3 transactions of 3 records)",
)
def _ex06_q4(answer, seeds):
    return predicted("records read", answer, lambda s: transaction_log(TX_PLAN, 2, s)[1], seeds)


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


def _output_then_offset(db, record):
    db.execute("INSERT INTO output VALUES (?)", (record.value.decode(),))
    db.execute("INSERT OR REPLACE INTO offsets VALUES (?, ?, ?)", (record.topic, record.partition, record.offset + 1))


def _offset_then_output(db, record):
    db.execute("INSERT OR REPLACE INTO offsets VALUES (?, ?, ?)", (record.topic, record.partition, record.offset + 1))
    db.execute("INSERT INTO output VALUES (?)", (record.value.decode(),))


def _one_transaction(db, record):
    db.execute("BEGIN")
    _output_then_offset(db, record)
    db.execute("COMMIT")


def _stored_positions(db):
    return {(t, p): o for t, p, o in db.execute("SELECT topic, partition, next_offset FROM offsets")}


#: ex07_q2's options: how store(db, record) writes the row and the next offset
STORE_ORDERS = {
    "row, then offset": _output_then_offset,
    "offset, then row": _offset_then_output,
    "row and offset in one transaction": _one_transaction,
}


@exercise(
    id="ex07_q2",
    notebook="07_exactly_once_external",
    kind="choose",
    expect=expect_choice(*STORE_ORDERS),
    public_seeds=tuple(range(4)),
    question="The application resumes from the offsets it stored in SQLite. How must store(db, record) write "
    "the output row and the next offset so that a crash between any two SQL statements neither loses "
    "nor duplicates a message? " + "; ".join(map(repr, STORE_ORDERS)),
    hint="Each order leaves a window between two statements: what does a crash in that window leave behind?",
)
def _ex07_q2(answer, seeds):
    from .harness import run_external_store

    parts = []
    for s in seeds:
        result = run_external_store(STORE_ORDERS[answer], _stored_positions, s)
        lost, dup = result.by_kind("lost_in_processing"), result.by_kind("duplicate_processing")
        parts.append(Part(f"crash run, seed {s}", not (lost or dup), f"{len(lost)} lost, {len(dup)} duplicated", s))
    return parts


# ---- 08 claims from the articles -----------------------------------------------------------------
SCENARIO_NAMES = (
    "leader_crash_after_ack",
    "not_enough_replicas",
    "lost_ack_retry",
    "retries_reorder",
    "unclean_election",
    "fire_and_forget_crash",
    "producer_restart_gap",
)


def _refutes(name: str, setting: str, holds: Callable[[dict], bool], anomaly: str) -> list[Part]:
    """Does scenario ``name`` (seed 0, its defaults) run with ``setting`` and still show ``anomaly``?"""
    run = _scenario(name, 0)
    return [
        Part(f"uses {setting}", holds(run.producer_config), f"{name} runs with {run.producer_config}", 0),
        Part(
            f"shows {anomaly}",
            anomaly in run.result.found,
            f"{name} shows {sorted(run.result.found) or 'no anomaly'}",
            0,
        ),
    ]


@exercise(
    id="ex08_q1",
    notebook="08_claims_tested",
    kind="choose",
    expect=expect_choice(*SCENARIO_NAMES),
    question="Refute the claim 'acks=all gives exactly-once': name a scenario that, run with its defaults "
    "(seed 0), uses acks='all' and still shows a duplicate.",
    hint="acks decides when a write counts as durable; what happens when the answer to a durable write is lost?",
)
def _ex08_q1(answer, seeds):
    return _refutes(answer, "acks='all'", lambda c: c.get("acks", "all") in ("all", -1), "duplicate")


@exercise(
    id="ex08_q2",
    notebook="08_claims_tested",
    kind="choose",
    expect=expect_choice(*SCENARIO_NAMES),
    question="Refute the claim 'the idempotent producer never writes a duplicate': name a scenario that runs "
    "with enable_idempotence=True and still shows a duplicate.",
    hint="The broker deduplicates by producer id and sequence number. When does the producer id change?",
)
def _ex08_q2(answer, seeds):
    return _refutes(answer, "enable_idempotence=True", lambda c: c.get("enable_idempotence") is True, "duplicate")


@exercise(
    id="ex08_q3",
    notebook="08_claims_tested",
    kind="choose",
    expect=expect_choice(*SCENARIO_NAMES),
    question="Refute the claim 'with acks=all an acknowledged write is never lost': name a scenario that "
    "runs with acks='all' and still loses an acknowledged message.",
    hint="acks=all waits for the in-sync replicas. How many can there be, and who may become leader?",
)
def _ex08_q3(answer, seeds):
    return _refutes(answer, "acks='all'", lambda c: c.get("acks", "all") in ("all", -1), "lost")


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


# the registries of lesson 05b and of the capstone add themselves to EXERCISES
from . import capstone, group_exercises  # noqa: E402,F401
