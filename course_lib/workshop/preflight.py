"""Preflight: what every learner runs in the first two minutes of a workshop (workshop/preflight.ipynb).

Each check answers one question with a line that is green (``ok``), red (``fail``, with what to do)
or grey (``skip``, with why), so that a room of learners can say "line 4 is red" instead of pasting
tracebacks:

1. widgets - ipywidgets is in the kernel (whether the *browser* renders them is shown by
   :func:`widget_probe`, a widget whose fallback text is the red line);
2. simulator - the seeded lost-ACK scenario gives its known outcome;
3. cluster login - the shared cluster answers this learner's credentials (``connect()``);
4. own prefix - the learner may create, write and read ``<prefix>.preflight`` with a group;
5. another's prefix - a write outside the prefix is refused (the ACLs isolate learners);
6. transactions - ``init_transactions()`` and a committed transaction under the learner's prefix;
7. Spark Connect - if ``SPARK_REMOTE`` is set, the server answers with this kernel's Spark version.

Every check runs whatever happened before it (a red line never stops the notebook); the Kafka
checks after a failed login are skipped with that reason. From a terminal (an instructor testing a
learner's connection file)::

    python -m course_lib.workshop.preflight --env-file workshop-connections/ann.env
"""

from __future__ import annotations

import argparse
import html
import os
import socket
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

OK, FAIL, SKIP = "ok", "fail", "skip"
#: the topic, group and transactional id the checks use, under the learner's prefix
PREFLIGHT_NAME = "preflight"
#: a prefix no learner has (roster names cannot contain '.', so no learner owns 'not.yours.')
FOREIGN_TOPIC = "not.yours.preflight"
CLIENT_TIMEOUT_MS = 15_000
ASK_INSTRUCTOR = "If it stays red, show this line to your instructor."


@dataclass(frozen=True)
class CheckResult:
    """One line of the preflight: ``status`` is ``ok``, ``fail`` or ``skip``."""

    name: str
    status: str
    detail: str
    fix: str = ""
    seconds: float = 0.0

    def __post_init__(self) -> None:
        if self.status not in (OK, FAIL, SKIP):
            raise ValueError(f"status must be one of ok/fail/skip, not {self.status!r}")

    def line(self) -> str:
        """The line as plain text (what a terminal, a log or the tests see)."""
        mark = {OK: "OK  ", FAIL: "FAIL", SKIP: "SKIP"}[self.status]
        text = f"{mark} {self.name}: {self.detail}"
        return f"{text} -> {self.fix}" if self.fix else text


@dataclass
class Report:
    """All lines of one preflight run; renders as a coloured table in a notebook."""

    results: list[CheckResult] = field(default_factory=list)

    @property
    def all_green(self) -> bool:
        """True when nothing failed (skipped lines are fine: e.g. no Spark Connect at this workshop)."""
        return all(r.status != FAIL for r in self.results)

    def by_name(self, name: str) -> CheckResult:
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(f"no check named {name!r}; checks: {[r.name for r in self.results]}")

    def summary(self) -> str:
        failed = [r.name for r in self.results if r.status == FAIL]
        if not failed:
            return "All set: nothing is red. You can start lesson 00."
        return f"{len(failed)} line(s) red: {', '.join(failed)}. Do what the red line(s) say, then run this cell again."

    def __str__(self) -> str:
        return "\n".join([r.line() for r in self.results] + [self.summary()])

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        colour = {OK: "#1a7f37", FAIL: "#cf222e", SKIP: "#6e7781"}
        label = {OK: "✔ ok", FAIL: "✘ FAIL", SKIP: "– skipped"}
        rows = []
        for r in self.results:
            what = html.escape(r.detail) + (f"<br><b>What to do:</b> {html.escape(r.fix)}" if r.fix else "")
            rows.append(
                f"<tr><td style='color:{colour[r.status]};font-weight:bold;white-space:nowrap'>{label[r.status]}</td>"
                f"<td style='white-space:nowrap'>{html.escape(r.name)}</td>"
                f"<td style='text-align:left'>{what}</td></tr>"
            )
        head = "<tr><th></th><th>check</th><th style='text-align:left'>result</th></tr>"
        tone = colour[OK] if self.all_green else colour[FAIL]
        return f"<table>{head}{''.join(rows)}</table><p style='color:{tone};font-weight:bold'>{html.escape(self.summary())}</p>"


# ---- what went wrong, in the learner's words ---------------------------------------------------
def _chain(exc: BaseException):
    """The exception and the ones it was raised from (the course wraps Kafka's errors)."""
    seen = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:600]}" if text else type(exc).__name__


def _listening(bootstrap_servers: str, timeout_s: float = 3.0) -> bool:
    """True if any ``host:port`` of the list accepts a TCP connection."""
    for server in bootstrap_servers.split(","):
        host, _, port = server.strip().rpartition(":")
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s):
                return True
        except (OSError, ValueError):
            continue
    return False


def explain_kafka_error(exc: BaseException, where: str, user: str | None) -> str:
    """What a learner should do about ``exc``, raised while talking to the cluster at ``where``."""
    from kafka import errors as kerr

    for e in _chain(exc):
        if isinstance(e, kerr.SaslAuthenticationFailedError):
            return (
                f"the cluster refused the login of {user!r}: the user name or password is wrong. Use the "
                f"connection file your instructor gave you (KAFKA_SASL_USERNAME / KAFKA_SASL_PASSWORD, or "
                f"COURSE_CONNECTION_FILE), then restart the kernel and run this notebook again."
            )
        if isinstance(e, kerr.AuthorizationError):
            return (
                f"the cluster denied {user!r} something under your own prefix: your ACLs are missing. "
                f"Ask your instructor to run `python -m course_lib.workshop` for you again."
            )
    if any(isinstance(e, (kerr.KafkaConnectionError, kerr.KafkaTimeoutError)) for e in _chain(exc)):
        # kafka-python reports a refused SCRAM login as a bootstrap timeout, like a wrong address:
        # whether anything listens at the address tells the two apart.
        if user and _listening(where):
            return (
                f"a broker answers at {where} but did not accept the login of {user!r}: most likely the "
                f"password (or user name) is wrong. Use the connection file your instructor gave you "
                f"(KAFKA_SASL_USERNAME / KAFKA_SASL_PASSWORD, or COURSE_CONNECTION_FILE), restart the kernel "
                f"and run this notebook again. {ASK_INSTRUCTOR}"
            )
        return (
            f"no broker answered at {where}: check KAFKA_BOOTSTRAP_SERVERS (as your instructor gave it) and "
            f"that this machine can reach it; the cluster may be down. {ASK_INSTRUCTOR}"
        )
    # The course's own errors (connect()'s clear messages) already say what to do.
    return f"{_first_line(exc)}. {ASK_INSTRUCTOR}"


# ---- the checks --------------------------------------------------------------------------------
def check_widgets(in_notebook: bool = True) -> CheckResult:
    """ipywidgets in the kernel. In a notebook, the widget probe drawn above the table shows the
    browser side; a terminal has no such line, so its text says where to look instead."""
    try:
        import ipywidgets
    except ImportError:
        return CheckResult(
            "widgets", FAIL, "ipywidgets is not installed in this kernel", "install the course: pip install -e '.[lab]'"
        )
    major = int(ipywidgets.__version__.split(".")[0])
    if major < 8:
        return CheckResult(
            "widgets",
            FAIL,
            f"ipywidgets {ipywidgets.__version__} is too old (the course needs 8)",
            "pip install 'ipywidgets>=8.1,<9', then restart the kernel",
        )
    browser = (
        "the green 'widgets render' line above this table shows that your browser draws them"
        if in_notebook
        else "whether your browser draws them shows in workshop/preflight.ipynb (its 'widgets render' line)"
    )
    return CheckResult("widgets", OK, f"ipywidgets {ipywidgets.__version__} in the kernel; {browser}")


def check_simulator() -> CheckResult:
    """The seeded lost-ACK scenario of lesson 00: a duplicate without idempotence, none with it."""
    from course_lib.experiments.scenarios import run_scenario

    plain = run_scenario("lost_ack_retry", seed=1, idempotent=False)
    safe = run_scenario("lost_ack_retry", seed=1, idempotent=True)
    if "duplicate" in plain.anomalies and not safe.anomalies:
        return CheckResult("simulator", OK, "lost-ACK scenario: duplicate without idempotence, none with it")
    return CheckResult(
        "simulator",
        FAIL,
        f"lost-ACK scenario gave {sorted(plain.anomalies)} / {sorted(safe.anomalies)}, expected ['duplicate'] / []",
        "this copy of the course is broken: update it (git pull / restart the server). " + ASK_INSTRUCTOR,
    )


def cluster_configured(env_file: str | None, environ=None) -> bool:
    environ = os.environ if environ is None else environ
    return bool(env_file or environ.get("KAFKA_BOOTSTRAP_SERVERS") or environ.get("COURSE_CONNECTION_FILE"))


def open_cluster(env_file: str | None = None):
    """``connect()`` as the lessons do: the environment, or the learner's connection file."""
    from course_lib.real.connect import connect

    return connect(env_file=env_file) if env_file else connect()


def _user(kafka) -> str | None:
    return kafka.client_config().get("sasl_plain_username")


def check_login(kafka) -> CheckResult:
    config = kafka.client_config()
    admin = kafka.admin(request_timeout_ms=CLIENT_TIMEOUT_MS, bootstrap_timeout_ms=CLIENT_TIMEOUT_MS)
    try:
        brokers = admin.describe_cluster()["brokers"]
    finally:
        admin.close()
    who = f"as {_user(kafka)!r}" if _user(kafka) else "without a login"
    return CheckResult(
        "cluster login", OK, f"connected to {config['bootstrap_servers']} {who}: {len(brokers)} broker(s) answer"
    )


def _producer(kafka, **config):
    from kafka import KafkaProducer

    return KafkaProducer(**kafka.client_config(), max_block_ms=CLIENT_TIMEOUT_MS, **config)


def check_own_prefix(kafka) -> CheckResult:
    """Create, write and read (with a consumer group) a topic under the learner's prefix."""
    from kafka import KafkaConsumer

    topic = kafka.create_topic(PREFLIGHT_NAME)
    producer = _producer(kafka)
    try:
        sent = producer.send(topic, b"preflight").get(timeout=CLIENT_TIMEOUT_MS / 1000)
    finally:
        producer.close(timeout=5)
    consumer = KafkaConsumer(
        topic,
        **kafka.client_config(),
        group_id=kafka.group_id(PREFLIGHT_NAME),
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        consumer_timeout_ms=CLIENT_TIMEOUT_MS,
    )
    try:
        got = next((r for r in consumer if r.offset >= sent.offset), None)
        if got is not None:
            consumer.commit()
    finally:
        consumer.close()
    if got is None:
        return CheckResult(
            "your prefix",
            FAIL,
            f"wrote offset {sent.offset} of {topic!r} but did not read it back within {CLIENT_TIMEOUT_MS // 1000} s",
            "the cluster may be overloaded: run the cell again in a minute. " + ASK_INSTRUCTOR,
        )
    return CheckResult(
        "your prefix",
        OK,
        f"created {topic!r}, wrote and read offset {sent.offset}, committed group {kafka.group_id(PREFLIGHT_NAME)!r}",
    )


def _is_denied(exc: BaseException) -> bool:
    from kafka import errors as kerr

    return any(isinstance(e, (kerr.AuthorizationError, PermissionError)) for e in _chain(exc))


def check_foreign_prefix(kafka) -> CheckResult:
    """A write outside the learner's prefix must be refused: that is what keeps learners apart."""
    if not _user(kafka):
        return CheckResult(
            "another's prefix",
            SKIP,
            "this cluster needs no login, so nothing keeps learners apart (fine when you work alone)",
            "at a workshop, ask your instructor for your connection file",
        )
    producer = _producer(kafka)
    try:
        producer.send(FOREIGN_TOPIC, b"preflight").get(timeout=CLIENT_TIMEOUT_MS / 1000)
    except Exception as exc:
        if _is_denied(exc):
            return CheckResult("another's prefix", OK, f"writing {FOREIGN_TOPIC!r} was refused, as it must be")
        raise
    finally:
        producer.close(timeout=5)
    return CheckResult(
        "another's prefix",
        FAIL,
        f"writing {FOREIGN_TOPIC!r} was ALLOWED: your account can touch other learners' topics",
        "tell your instructor: the cluster's ACLs do not isolate learners (authorizer off or an ACL too wide)",
    )


def check_transactions(kafka) -> CheckResult:
    tid = kafka.transactional_id(PREFLIGHT_NAME)
    topic = kafka.topic(PREFLIGHT_NAME)
    producer = _producer(kafka, transactional_id=tid)
    try:
        start = time.monotonic()
        producer.init_transactions()
        init_s = time.monotonic() - start
        producer.begin_transaction()
        producer.send(topic, b"preflight-tx").get(timeout=CLIENT_TIMEOUT_MS / 1000)
        producer.commit_transaction()
    finally:
        producer.close(timeout=5)
    return CheckResult(
        "transactions", OK, f"init_transactions() for {tid!r} took {init_s:.1f} s; a transaction committed"
    )


def check_spark(environ=None) -> CheckResult:
    environ = os.environ if environ is None else environ
    url = (environ.get("SPARK_REMOTE") or "").strip()
    if not url:
        return CheckResult("Spark Connect", SKIP, "skipped: no Spark Connect configured (SPARK_REMOTE is not set)")
    try:
        from course_lib.spark.remote import connect_session
    except ImportError as exc:
        return CheckResult(
            "Spark Connect",
            FAIL,
            f"SPARK_REMOTE={url} but this course has no Spark Connect client ({exc})",
            "install the course's Spark extra (pip install -e '.[spark]') and update the course; restart the kernel",
        )
    from course_lib.real.connect import learner_prefix

    try:
        spark = connect_session(url, user_id=learner_prefix())
    except Exception as exc:  # SparkUnavailable: its message says what to fix
        return CheckResult("Spark Connect", FAIL, f"{url} did not work", _first_line(exc))
    try:
        import pyspark

        version = spark.version
    finally:
        spark.stop()
    return CheckResult(
        "Spark Connect",
        OK,
        f"{url} answers: Spark {version} (this kernel: pyspark {pyspark.__version__}), Kafka connector present",
    )


def _timed(name: str, fn: Callable[[], CheckResult], explain: Callable[[BaseException], str]) -> CheckResult:
    start = time.monotonic()
    try:
        result = fn()
    except Exception as exc:
        result = CheckResult(name, FAIL, _first_line(exc), explain(exc))
    seconds = time.monotonic() - start
    return CheckResult(result.name, result.status, result.detail, result.fix, seconds)


def run_checks(
    env_file: str | None = None, on_result: Callable[[Report], None] | None = None, in_notebook: bool = True
) -> Report:
    """Run every check in order; ``on_result(report)`` after each one (the notebook redraws).
    ``in_notebook=False``: the terminal's run, whose lines never point at a notebook's cells."""
    report = Report()

    def add(result: CheckResult) -> None:
        report.results.append(result)
        if on_result is not None:
            on_result(report)

    unexpected = lambda exc: f"unexpected error. {ASK_INSTRUCTOR}"
    add(_timed("widgets", lambda: check_widgets(in_notebook), unexpected))
    add(_timed("simulator", check_simulator, unexpected))

    kafka_checks = [
        ("your prefix", check_own_prefix),
        ("another's prefix", check_foreign_prefix),
        ("transactions", check_transactions),
    ]
    if not cluster_configured(env_file):
        add(
            CheckResult(
                "cluster login",
                SKIP,
                "no shared cluster configured (KAFKA_BOOTSTRAP_SERVERS and COURSE_CONNECTION_FILE are unset)",
                "at a workshop this is wrong: tell your instructor. Working alone: fine, lesson 09 starts its own cluster",
            )
        )
        for name, _ in kafka_checks:
            add(CheckResult(name, SKIP, "skipped: no shared cluster configured"))
    else:
        try:
            kafka = open_cluster(env_file)
            where = kafka.client_config().get("bootstrap_servers", "?")
        except Exception as exc:  # connect()'s own errors say which setting is wrong
            kafka = None
            add(CheckResult("cluster login", FAIL, "the connection settings are unusable", _first_line(exc)))
        if kafka is not None:
            explain = lambda exc: explain_kafka_error(exc, where, _user(kafka))
            login = _timed("cluster login", lambda: check_login(kafka), explain)
            add(login)
        for name, fn in kafka_checks:
            if kafka is None or report.by_name("cluster login").status != OK:
                add(CheckResult(name, SKIP, "skipped: the cluster login line is not green"))
            else:
                add(_timed(name, lambda fn=fn: fn(kafka), explain))
        if kafka is not None:
            kafka.close()  # its fault proxy's listening socket
    add(_timed("Spark Connect", check_spark, unexpected))
    return report


# ---- notebook side ----------------------------------------------------------------------------
class WidgetProbe:
    """A widget that says "widgets render" in green; where the browser cannot draw widgets, the
    front end shows its text fallback instead - the red line with what to do."""

    FALLBACK = (
        "FAIL widgets render: your browser shows this text instead of a green line -> reload the page "
        "(Ctrl+Shift+R); if it stays, the JupyterLab widget extension is missing: tell your instructor"
    )

    def __init__(self) -> None:
        import ipywidgets

        self.widget = ipywidgets.HTML("<b style='color:#1a7f37'>✔ widgets render in your browser</b>")

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = self.FALLBACK
        return bundle


def widget_probe() -> WidgetProbe:
    return WidgetProbe()


def preflight(env_file: str | None = None) -> Report:
    """Run the checks, redrawing one table as each line arrives; returns the report."""
    from IPython.display import display

    handle = display(Report(), display_id=True)
    return run_checks(env_file, on_result=lambda report: handle.update(report) if handle else None)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m course_lib.workshop.preflight", description=__doc__.split("\n\n")[0])
    ap.add_argument("--env-file", help="a learner's connection file (default: the environment)")
    args = ap.parse_args(argv)
    report = run_checks(args.env_file, in_notebook=False)
    print(report)
    return 0 if report.all_green else 1


if __name__ == "__main__":
    sys.exit(main())
