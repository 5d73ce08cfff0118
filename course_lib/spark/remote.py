"""The Spark lab against a shared Spark Connect server: URL, per-learner directory, Kafka options.

With ``SPARK_REMOTE=sc://host:15002`` (or ``remote=`` / notebook 10's ``SPARK_REMOTE``
parameter) the learner's kernel is a Spark Connect client: the queries, their checkpoints, the
file sink and the ``foreachBatch`` writer all run *in the server*. Hence:

- paths the pipeline writes are the server's paths. Each learner gets ``<base>/<prefix>``, where
  ``<base>`` is ``$COURSE_SPARK_DIR`` (storage the server sees - on a workshop machine, a volume
  mounted at the same path in the server and in every learner's kernel, because the lab's
  harness reads the checkpoints and sinks back from the kernel) and ``<prefix>`` is the learner's
  name (:func:`learner_name`: the same prefix as the learner's Kafka names);
- the Kafka connector is on the server (:mod:`course_lib.spark.connect_server` puts it there);
- Kafka credentials go into the query's options (:func:`lab_kafka_settings`).

A URL that does not answer is reported within seconds (:func:`connect_session`), not after the
client's default retries (which give up only after about ten minutes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from urllib.parse import urlparse

from course_lib.spark.prerequisites import KAFKA_PROVIDER_CLASS, SparkUnavailable, check_connect_client, import_root

ENV_REMOTE = "SPARK_REMOTE"
ENV_DIR = "COURSE_SPARK_DIR"
INSTRUCTOR_HINT = (
    "An instructor starts one with `python -m course_lib.spark.connect_server --host 0.0.0.0 "
    "--port 15002` (see the README, Spark lab)."
)


def resolve_remote(remote: str | None = None) -> str | None:
    """The Spark Connect URL to use, or None for a local session.

    ``remote`` wins when given (``""`` forces local); otherwise ``$SPARK_REMOTE`` (or the
    ``SPARK_REMOTE`` line of the learner's connection file, ``$COURSE_CONNECTION_FILE``).

    >>> resolve_remote("sc://spark.example:15002")
    'sc://spark.example:15002'
    >>> resolve_remote("") is None
    True
    """
    url = _settings().get(ENV_REMOTE) if remote is None else remote
    url = (url or "").strip()
    if not url:
        return None
    parse_remote(url)  # fail early on a malformed URL
    return url


def parse_remote(url: str) -> tuple[str, int, dict[str, str]]:
    """``sc://host:port[/;key=value;...]`` -> (host, port, params); a clear error otherwise.

    >>> parse_remote("sc://127.0.0.1:15002/;user_id=ann")
    ('127.0.0.1', 15002, {'user_id': 'ann'})
    >>> parse_remote("http://h:1")
    Traceback (most recent call last):
    ...
    course_lib.spark.prerequisites.SparkUnavailable: SPARK_REMOTE='http://h:1' is not a Spark Connect URL: write sc://host:port, e.g. sc://127.0.0.1:15002
    """
    bad = SparkUnavailable(
        f"SPARK_REMOTE={url!r} is not a Spark Connect URL: write sc://host:port, e.g. sc://127.0.0.1:15002"
    )
    parsed = urlparse(url)
    if parsed.scheme != "sc" or not parsed.hostname:
        raise bad
    try:
        port = parsed.port or 15002
    except ValueError:
        raise bad from None
    params = {}
    for part in parsed.path.lstrip("/").split(";"):
        if "=" in part:
            key, value = part.split("=", 1)
            params[key] = value
    return parsed.hostname, port, params


def with_params(url: str, **params: str | None) -> str:
    """The URL with extra ``;key=value`` parameters (existing ones kept unless overridden).

    >>> with_params("sc://h:15002", user_id="ann", session_id=None)
    'sc://h:15002/;user_id=ann'
    """
    host, port, existing = parse_remote(url)
    merged = {**existing, **{k: v for k, v in params.items() if v is not None}}
    tail = ";".join(f"{k}={v}" for k, v in merged.items())
    return f"sc://{host}:{port}" + (f"/;{tail}" if tail else "")


def learner_workdir(base: str | os.PathLike | None = None, prefix: str | None = None) -> Path:
    """``<base>/<learner prefix>``: where this learner's checkpoints, store and files live.

    ``base``: the argument, ``$COURSE_SPARK_DIR``, or ``<tmp>/course-spark`` (fine when the
    server runs on this machine). Two learners never share a checkpoint: a checkpoint used by two
    queries at once breaks both.
    """
    root = Path(base or os.environ.get(ENV_DIR) or Path(tempfile.gettempdir()) / "course-spark")
    return root / learner_name(prefix)


def _settings() -> dict[str, str]:
    """The learner's connection settings: the environment, or their connection file."""
    from course_lib.real.connect import connection_settings

    return connection_settings()


def learner_name(prefix: str | None = None) -> str:
    """The learner's prefix, chosen as ``connect()`` chooses it for Kafka names: the argument,
    ``COURSE_LEARNER_PREFIX``, the SASL user name (environment or connection file), else the
    login name. It names the learner's directory and their Spark Connect user id.

    >>> learner_name("Ada Lovelace")
    'Ada-Lovelace'
    """
    from course_lib.real.connect import ENV_PREFIX, ENV_USERNAME, learner_prefix

    if prefix is None:
        s = _settings()
        prefix = s.get(ENV_PREFIX) or s.get(ENV_USERNAME)
    return learner_prefix(prefix)


def _tcp_answers(host: str, port: int, timeout_s: float) -> str | None:
    """None if ``host:port`` accepts a TCP connection, else why not."""
    import socket

    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return None
    except socket.timeout:
        return f"no answer within {timeout_s:.0f} s"
    except OSError as exc:
        return exc.strerror or type(exc).__name__


def not_answering(url: str, why: str) -> SparkUnavailable:
    return SparkUnavailable(
        f"the Spark Connect server at {url} does not answer ({why}). Check SPARK_REMOTE (host and "
        "port, as given by your instructor), that the server is running and that this machine may "
        f"reach it. {INSTRUCTOR_HINT}"
    )


def connect_session(
    url: str,
    *,
    session_id: str | None = None,
    user_id: str | None = None,
    probe_timeout_s: float = 5.0,
    session_conf: dict[str, str] | None = None,
):
    """A Spark Connect session to ``url`` that is known to answer and to have the Kafka connector.

    ``session_id`` (a UUID) names the server-side session: a second client with the same id
    reaches the same session (the harness uses it to stop a killed job's queries). Errors, each
    within a few seconds: the URL malformed, nothing listening, something listening that is not
    Spark Connect, no Kafka connector on the server.
    """
    host, port, _ = parse_remote(url)
    why = _tcp_answers(host, port, probe_timeout_s)
    if why:
        raise not_answering(url, why)
    check_connect_client()
    from pyspark.sql import SparkSession
    from pyspark.sql.connect.client.retries import DefaultPolicy

    full = with_params(url, session_id=session_id or str(uuid.uuid4()), user_id=user_id)
    spark = SparkSession.builder.remote(full).create()
    client = spark.client
    policies = client.get_retry_policies()
    # One quick attempt: the default policy retries UNAVAILABLE for about ten minutes.
    client.set_retry_policies([DefaultPolicy(max_retries=2, initial_backoff=200, max_backoff=1000)])
    version = None
    try:
        version = spark.version  # the first call: does a Spark Connect server answer at all?
        for key, value in (session_conf or {}).items():
            spark.conf.set(key, value)
        _check_kafka_connector(spark, url)
    except Exception as exc:
        # Close now: a failed session object collected later, during another session's call,
        # can deadlock pyspark 4.0's client (it shuts a shared thread pool down in __del__).
        client.close()
        if isinstance(exc, SparkUnavailable):
            raise
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        if version is None:
            raise not_answering(url, f"it accepts connections but does not speak Spark Connect: {first}") from exc
        raise SparkUnavailable(f"the Spark Connect server at {url} refused to set up the session: {first}") from exc
    finally:
        client.set_retry_policies(policies)
    import pyspark

    if version.split(".")[:2] != pyspark.__version__.split(".")[:2]:
        raise SparkUnavailable(
            f"the Spark Connect server at {url} runs Spark {version}, this kernel has pyspark "
            f"{pyspark.__version__}: install the same minor version (`pip install 'pyspark=={version}'`)."
        )
    return spark


def _check_kafka_connector(spark, url: str) -> None:
    """Resolve the Kafka data source on the server (analysis only: no broker is contacted)."""
    try:
        schema = (
            spark.read.format("kafka")
            .option("kafka.bootstrap.servers", "127.0.0.1:9")
            .option("subscribe", "course-connector-probe")
            .load()
            .schema
        )
        if "offset" not in schema.fieldNames():  # the connector's fixed schema
            raise SparkUnavailable(f"the Spark Connect server at {url} returned an unexpected Kafka schema: {schema}")
    except Exception as exc:
        text = str(exc)
        if "kafka" in text.lower() and ("DATA_SOURCE_NOT_FOUND" in text or "Failed to find data source" in text):
            raise SparkUnavailable(
                f"the Spark Connect server at {url} has no Kafka connector ({KAFKA_PROVIDER_CLASS} not "
                "found). The instructor must start it with the connector jars: "
                "`python -m course_lib.spark.connect_server` adds them."
            ) from exc
        raise


def stop_session_queries(url: str, session_id: str, user_id: str | None = None, timeout_s: float = 120.0) -> list[str]:
    """Stop every streaming query still active in server-side session ``session_id``; close it.

    What a SIGKILL of a local driver does by itself: a Spark Connect client that dies leaves its
    queries running in the server, where the next run would find its checkpoints in use. The
    server keys sessions by (user id, session id): ``user_id`` must be the one the dead client
    used, or this reaches a new, empty session. Returns the names of the queries stopped; a
    session already closed (the job ended cleanly) is fine.

    It runs in a child process: pyspark 4.0's client closes a shared thread pool when a session
    object is garbage-collected, which can deadlock another session's call in the same process
    (seen here) - and the caller is often a notebook kernel with its own session.
    """
    code = "import sys, json; from course_lib.spark.remote import _stop_session_queries as f; print(json.dumps(f(*sys.argv[1:])))"
    run = subprocess.run(
        [sys.executable, "-c", code, url, session_id, user_id or ""],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        cwd=str(import_root()),
    )
    if run.returncode != 0:
        raise RuntimeError(f"could not stop the queries of session {session_id} on {url}: {run.stderr.strip()[-1500:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def _stop_session_queries(url: str, session_id: str, user_id: str = "") -> list[str]:
    from pyspark.sql import SparkSession
    from pyspark.sql.connect.client.retries import DefaultPolicy

    spark = SparkSession.builder.remote(with_params(url, session_id=session_id, user_id=user_id or None)).create()
    spark.client.set_retry_policies([DefaultPolicy(max_retries=3, initial_backoff=200, max_backoff=2000)])
    stopped = []
    try:
        for q in spark.streams.active:
            stopped.append(q.name)
            q.stop()  # returns when the query's thread has ended
    except Exception as exc:
        if "SESSION_CLOSED" not in str(exc) and "SESSION_NOT_FOUND" not in str(exc):
            raise
    finally:
        try:
            spark.stop()  # releases the session on the server
        except Exception:
            pass  # already closed
    return stopped


def lab_kafka_settings(kafka) -> dict:
    """``ExperimentOptions`` keywords for a learner on a shared cluster (a ``connect()`` handle):
    their prefix (the loader's transactional id must be under it) and their login for every
    client - kafka-python's settings (``client_config``) and the same for Spark's connector,
    which takes Java client properties with a ``kafka.`` prefix (``kafka_options``). Topic names
    go through ``kafka.topic(name)``.

    >>> from course_lib.real.connect import RemoteCluster
    >>> s = lab_kafka_settings(RemoteCluster("k:9092", "ann", "ann", "pw"))
    >>> s["learner"], s["client_config"]["sasl_plain_username"], sorted(s["kafka_options"])
    ('ann', 'ann', ['kafka.sasl.jaas.config', 'kafka.sasl.mechanism', 'kafka.security.protocol'])
    """
    java = kafka.java_client_properties()
    return {
        "learner": kafka.prefix,
        "client_config": kafka.client_config(),
        # bootstrap.servers is the pipeline's own option
        "kafka_options": {f"kafka.{k}": v for k, v in java.items() if k != "bootstrap.servers"},
    }
