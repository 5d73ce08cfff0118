"""Notebook 10's pipeline through a Spark Connect server: two learners at once, each exactly-once.

One Spark Connect server (started from the installed pyspark, with the Kafka connector jars, on a
free port of 127.0.0.1) and one local Kafka cluster. Two learners, ``ann`` and ``bob``, run the
kill/restart experiment at the same time, each as their own Spark Connect clients (one per job
run, killed in the window of every sink and once at a random moment), with their own topics and
their own directory under ``$COURSE_SPARK_DIR``. Both stream the same data set, so any mixing of
their checkpoints or sinks would show up as duplicated order ids.

The bad-input tests (a URL that does not answer, a busy port, no Java) need no server.
"""

from __future__ import annotations

import os
import pickle
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from course_lib.spark.session import SparkUnavailable

# Bounds for a hang, not a speed: two learners under a second suite on 2 cores took 600 s.
pytestmark = [pytest.mark.spark, pytest.mark.timeout(1200)]

LEARNERS = ("ann", "bob")
ROOT = Path(__file__).resolve().parents[2]


def _connect_client_or_skip():
    from course_lib.spark.session import check_connect_client, check_pyspark

    try:
        check_pyspark()
        check_connect_client()
    except SparkUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def connect_server(spark_ready, tmp_path_factory):
    from course_lib.spark.connect_server import SparkConnectServer

    server = SparkConnectServer(log_path=tmp_path_factory.mktemp("connect-server") / "server.log")
    server.start()
    pid = server.proc.pid
    yield server
    # the JVM's temporary folders were in the server's own scratch folder, not the system's
    made = {p.name.split("-")[0] for p in server.scratch_path.iterdir()}
    server.stop()
    with pytest.raises(ProcessLookupError):  # the JVM and its Python workers are gone too
        os.killpg(pid, 0)
    assert "spark" in made and "blockmgr" in made, made
    assert not server.scratch_path.exists()


@pytest.fixture(scope="module")
def two_learners(connect_server, kafka_cluster, tmp_path_factory):
    """Both learners' experiments, run concurrently: {learner: ExperimentResult}."""
    from course_lib.spark.harness import ExperimentOptions, run_experiment
    from course_lib.spark.remote import learner_workdir

    base = tmp_path_factory.mktemp("course-spark-dir")  # what $COURSE_SPARK_DIR names on a hub
    results, errors = {}, {}

    def learner(name: str, seed: int) -> None:
        opts = ExperimentOptions(
            n_orders=300,
            kills=4,  # one window kill per sink, then one random kill
            seed=seed,
            max_offsets_per_trigger=60,
            remote=connect_server.url,
            learner=name,
            input_topic=f"{name}.orders",
            output_topic=f"{name}.orders-enriched",
        )
        try:
            results[name] = run_experiment(
                kafka_cluster.bootstrap_servers,
                learner_workdir(base, name),
                opts,
                cluster=kafka_cluster,
                progress=False,
            )
        except BaseException as exc:  # reported by the test, with the learner's name
            errors[name] = exc

    t0 = time.monotonic()
    threads = [threading.Thread(target=learner, args=(name, 7 + i)) for i, name in enumerate(LEARNERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"\ntwo learners through Spark Connect in {time.monotonic() - t0:.0f} s")
    if errors:
        raise AssertionError(f"a learner's experiment failed: {errors!r}; server log: {connect_server.log_path}")
    for name, result in results.items():
        print(f"{name} (seed {result.options.seed}), work dir {result.workdir}:")
        result.print_table()
        for e in result.timeline:
            print("  ", e)
    return results


def test_each_learner_has_its_own_directory_under_the_base(two_learners):
    dirs = {name: Path(r.workdir) for name, r in two_learners.items()}
    assert {d.name for d in dirs.values()} == set(LEARNERS)
    assert len({d.parent for d in dirs.values()}) == 1
    for d in dirs.values():
        assert (d / "checkpoints" / "store" / "commits").is_dir() and (d / "store.sqlite").exists()


@pytest.mark.parametrize("name", LEARNERS)
def test_exactly_once_sinks_hold_every_order_once(two_learners, name):
    result = two_learners[name]
    assert result.runs[-1]["exit"] == 0, result.runs
    for sink in ("store", "files"):
        o = result.outcomes[sink]
        assert o["expected"] > 0
        assert (o["lost"], o["duplicated"], o["unexpected"]) == ([], {}, []), (sink, o)
    assert result.outcomes["store"]["balances_ok"]
    assert result.dead_letters["match"] and result.dead_letters["stored"] > 0
    checks = result.check()
    for sink in ("store", "files"):
        assert checks[sink].valid, checks[sink].summary()


@pytest.mark.parametrize("name", LEARNERS)
def test_the_window_kills_hit_every_sink_and_were_replayed(two_learners, name):
    result = two_learners[name]
    crashes = [op.value for op in result.history if op.process == "nemesis" and op.f == "crash"]
    windows = {c["sink"]: c["batch"] for c in crashes if c["moment"] == "window"}
    assert set(windows) == {"kafka", "store", "files"}, result.timeline
    for c in crashes:
        if c["moment"] == "window":  # the sink wrote batch N, the checkpoint did not commit it
            state = c["state"][c["sink"]]
            assert state["planned"] == c["batch"] and (state["committed"] or -1) < c["batch"]
    # Spark re-ran the store's batch after the restart; the batchId guard skipped it.
    assert windows["store"] in result.outcomes["store"]["replays_skipped"]
    # The at-least-once Kafka sink wrote its killed batch twice: the kills were real.
    kafka = result.outcomes["kafka"]
    assert kafka["lost"] == [] and kafka["duplicated"], kafka
    assert windows["kafka"] in {e["batch"] for e in result.evidence["kafka"]}


def test_queries_of_a_killed_client_are_stopped_through_its_session_id(connect_server, tmp_path):
    """What the harness does after SIGKILLing a job: the queries live on in the server until
    someone stops them in the dead client's session (same user id and session id)."""
    from course_lib.spark.remote import learner_name, stop_session_queries

    session_id = str(uuid.uuid4())
    offsets = tmp_path / "checkpoint" / "offsets"
    code = (
        "import sys, time\n"
        "from course_lib.spark.session import get_spark\n"
        "spark = get_spark(remote=sys.argv[1], session_id=sys.argv[2])\n"
        "q = (spark.readStream.format('rate').load().writeStream.format('noop')"
        ".queryName('outlives_its_client').option('checkpointLocation', sys.argv[3])"
        ".trigger(processingTime='500 milliseconds').start())\n"
        "print('STARTED', flush=True)\n"
        "time.sleep(600)\n"
    )
    client = subprocess.Popen(
        [sys.executable, "-c", code, connect_server.url, session_id, str(tmp_path / "checkpoint")],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert client.stdout.readline().startswith("STARTED")
    finally:
        client.kill()
        client.wait()

    def batches() -> int:
        return len([f for f in offsets.glob("*") if f.name.isdigit()]) if offsets.exists() else 0

    at_kill = batches()
    deadline = time.monotonic() + 60
    while batches() < at_kill + 2 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert batches() >= at_kill + 2, "the query should keep running in the server after its client died"
    # Another user id with the same session id reaches another (empty) session.
    assert stop_session_queries(connect_server.url, session_id, "someone-else") == []
    assert stop_session_queries(connect_server.url, session_id, learner_name()) == ["outlives_its_client"]
    after_stop = batches()
    time.sleep(3)
    assert batches() == after_stop, "the query still plans batches after it was stopped"


# ---- bad input: each a clear error, fast -------------------------------------------------
def test_a_url_that_does_not_answer_names_what_to_fix_within_seconds():
    _connect_client_or_skip()
    from course_lib.spark.connect_server import free_port
    from course_lib.spark.session import get_spark

    url = f"sc://127.0.0.1:{free_port()}"
    t0 = time.monotonic()
    with pytest.raises(SparkUnavailable) as err:
        get_spark(remote=url)
    assert time.monotonic() - t0 < 5
    text = str(err.value)
    assert url in text and "does not answer" in text and "SPARK_REMOTE" in text
    assert "connect_server" in text  # how the instructor starts one


def test_a_port_that_answers_but_is_not_spark_connect_is_reported():
    _connect_client_or_skip()
    from course_lib.spark.session import get_spark

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def serve() -> None:  # accepts, answers garbage, hangs up: no gRPC there
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(b"HTTP/1.0 404 Not Found\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    url = f"sc://127.0.0.1:{listener.getsockname()[1]}"
    t0 = time.monotonic()
    try:
        with pytest.raises(SparkUnavailable, match="does not speak Spark Connect") as err:
            get_spark(remote=url)
    finally:
        stop.set()
        thread.join()
        listener.close()
    assert time.monotonic() - t0 < 20
    assert url in str(err.value)


def test_a_malformed_url_says_how_to_write_one():
    from course_lib.spark.session import get_spark

    with pytest.raises(SparkUnavailable, match=r"write sc://host:port"):
        get_spark(remote="spark-server:15002")


def test_a_busy_port_is_refused_before_the_server_starts():
    pytest.importorskip("pyspark")
    from course_lib.spark.connect_server import SparkConnectServer
    from course_lib.spark.session import spark_unavailable_reason

    if spark_unavailable_reason():
        pytest.skip(spark_unavailable_reason())
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        server = SparkConnectServer(port=port)
        with pytest.raises(SparkUnavailable, match=f"port {port} on 127.0.0.1 is already in use"):
            server.start()
        assert server.proc is None


def test_a_server_that_never_ran_leaves_no_folder(monkeypatch, tmp_path):
    """Its log's folder is made when it starts and removed by stop(): refused starts and dry runs
    once left empty course-connect-server-* folders in /tmp after every passing suite."""
    import tempfile

    from course_lib.spark import connect_server

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java"))
    with pytest.raises(SparkUnavailable):
        connect_server.SparkConnectServer().start()
    monkeypatch.setattr(connect_server.SparkConnectServer, "command", lambda self: ["spark-submit", str(self.log_path)])
    assert connect_server.main(["--dry-run"]) == 0
    assert list(tmp_path.iterdir()) == []


def test_no_java_is_reported_by_the_server_helper(monkeypatch, tmp_path):
    from course_lib.spark.connect_server import SparkConnectServer

    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(SparkUnavailable, match="Java was not found"):
        SparkConnectServer().start()


def test_the_foreachbatch_writer_travels_by_value(tmp_path):
    """The server's Python worker can run the writer without the course's package installed."""
    pytest.importorskip("pyspark")
    from pyspark import cloudpickle

    from course_lib.spark import pipeline

    cloudpickle.register_pickle_by_value(pipeline)
    try:
        blob = cloudpickle.dumps(pipeline.StoreWriter(str(tmp_path / "store.sqlite"), True))
    finally:
        cloudpickle.unregister_pickle_by_value(pipeline)
    (tmp_path / "writer.pickle").write_bytes(blob)
    # course_lib made unimportable: sys.modules[name] = None makes `import name` fail.
    code = (
        "import pickle, sys\n"
        "sys.modules['course_lib'] = None\n"
        "w = pickle.loads(open(sys.argv[1], 'rb').read())\n"
        "from pathlib import Path\n"
        "print(w, w.__call__.__globals__['write_batch_to_store'](Path(w.store_path), 3, [], [], True))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "writer.pickle")],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().endswith("True"), run.stdout
    assert pickle.loads(blob).store_path == str(tmp_path / "store.sqlite")


# ---- the notebook itself, two learners at once ------------------------------------------------
def _run_lab_notebook(name: str, server_url: str, bootstrap: str, base: Path, out: Path) -> None:
    """Notebook 10 as a workshop learner runs it: parameters injected into its parameters cell
    (as papermill would), the learner's prefix in the kernel's environment."""
    import nbformat

    from tools.notebook_client import NotebookClient  # nbclient's, without its lost-wake-up stall

    nb = nbformat.read(ROOT / "notebooks" / "10_pyspark_exactly_once_lab.ipynb", as_version=4)
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    params.source += (
        f"\nimport os; os.environ['COURSE_LEARNER_PREFIX'] = {name!r}\n"
        f"SPARK_REMOTE = {server_url!r}\nBOOTSTRAP_SERVERS = {bootstrap!r}\nWORKDIR = {str(base)!r}\n"
        "N_ORDERS = 180\nKILLS = 1\nMAX_OFFSETS_PER_TRIGGER = 60\n"
    )
    try:
        NotebookClient(
            nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(ROOT / "notebooks")}}
        ).execute()
    finally:
        nbformat.write(nb, out)


def _sink_rows(text: str) -> dict[str, list[str]]:
    """The rows of ``print_table()``: {sink: [semantics, expected, observed, lost, duplicated, ...]}."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) >= 6 and cells[0] in ("kafka", "store", "files"):
            rows[cells[0]] = cells[1:]
    return rows


def test_notebook_10_runs_for_two_learners_at_once_through_spark_connect(connect_server, kafka_cluster, tmp_path):
    import nbformat

    threads, errors = [], {}
    for name in ("carol", "dave"):

        def run(name=name) -> None:
            try:
                _run_lab_notebook(
                    name,
                    connect_server.url,
                    kafka_cluster.bootstrap_servers,
                    tmp_path / "spark",
                    tmp_path / f"{name}.ipynb",
                )
            except BaseException as exc:
                errors[name] = exc

        threads.append(threading.Thread(target=run))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for name in ("carol", "dave"):
        cells = [c for c in nbformat.read(tmp_path / f"{name}.ipynb", as_version=4).cells if c.cell_type == "code"]
        texts = ["".join(o.get("text", "") for o in c.outputs if o["output_type"] == "stream") for c in cells]
        setup = next(t for t in texts if "Spark lab" in t)
        assert f"Spark Connect server {connect_server.url}" in setup and f"spark/{name}" in setup, setup
        tables = [(_sink_rows(t), t) for t in texts if _sink_rows(t)]
        assert len(tables) == 2, texts  # the clean run, then the run with kills
        for rows, text in tables:
            for sink in ("store", "files"):
                _semantics, expected, observed, lost, duplicated, *_ = rows[sink]
                assert (expected, lost, duplicated) == (observed, "0", "0") and int(expected) > 0, (name, rows)
            assert "'match': True" in text  # every malformed line in the dead-letter table
    # Each learner's topics are under their prefix (connect() named them), nothing unprefixed.
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(bootstrap_servers=kafka_cluster.bootstrap_servers)
    try:
        topics = consumer.topics()
    finally:
        consumer.close()
    for name in ("carol", "dave"):
        assert {f"{name}.orders", f"{name}.orders-enriched", f"{name}.orders-clean"} <= topics, topics
    assert "orders-clean" not in topics  # (test_harness's own run uses "orders" on this cluster)
    assert {p.name for p in (tmp_path / "spark").iterdir()} == {"carol", "dave"}


def test_a_server_without_the_kafka_connector_is_named_as_the_problem(spark_ready, tmp_path):
    import pyspark

    from course_lib.spark.connect_server import SparkConnectServer
    from course_lib.spark.session import get_spark

    # Any jar but the connector's (the helper refuses to start with none at all).
    some_jar = next((Path(pyspark.__file__).parent / "jars").glob("spark-connect_*.jar"))
    with SparkConnectServer(jars=[str(some_jar)], log_path=tmp_path / "server.log") as bare:
        with pytest.raises(SparkUnavailable, match="has no Kafka connector") as err:
            get_spark(remote=bare.url)
    assert "course_lib.spark.connect_server" in str(err.value)


# ---- the workshop path: an authenticated cluster with prefixed ACLs ----------------------------
@pytest.fixture(scope="module")
def workshop_connections(spark_ready, tmp_path_factory):
    """An authenticated 1-broker cluster (SASL SCRAM, StandardAuthorizer); learner erin
    provisioned by the instructor's command: her user, her prefixed ACLs, her connection file."""
    from tests.real.helpers import provisioned_cluster

    with provisioned_cluster(tmp_path_factory.mktemp("connections"), ["erin"]) as out:
        yield out


def test_a_learner_on_an_authenticated_cluster_is_exactly_once_through_spark_connect(
    connect_server, workshop_connections, tmp_path
):
    """SASL credentials reach Spark's Kafka source and sink (kafka.sasl.jaas.config), the
    loader's transactional id and the topics are under the learner's prefix (her ACLs allow
    nothing else), and a window kill of the store still ends exactly-once."""
    from course_lib.real.connect import connect
    from course_lib.spark.harness import ExperimentOptions, run_experiment
    from course_lib.spark.remote import lab_kafka_settings, learner_workdir

    kafka = connect(env_file=workshop_connections / "erin.env", fault_proxy=False)
    settings = lab_kafka_settings(kafka)
    assert settings["learner"] == "erin" and settings["client_config"]["sasl_plain_username"] == "erin"
    opts = ExperimentOptions(
        n_orders=120,
        kills=1,
        window_sinks=("store",),
        max_offsets_per_trigger=40,
        remote=connect_server.url,
        input_topic=kafka.topic("orders"),
        output_topic=kafka.topic("orders-enriched"),
        replication_factor=1,
        **settings,
    )
    result = run_experiment(kafka.bootstrap_servers, learner_workdir(tmp_path, kafka.prefix), opts, progress=False)
    print(result.timeline)
    assert result.runs[-1]["exit"] == 0, result.runs
    for sink in ("store", "files"):
        o = result.outcomes[sink]
        assert (o["lost"], o["duplicated"], o["unexpected"]) == ([], {}, []) and o["expected"] > 0, (sink, o)
    assert result.outcomes["kafka"]["lost"] == []  # read back from erin.orders-enriched with her login
    crash = next(op.value for op in result.history if op.f == "crash" and op.value.get("moment") == "window")
    assert crash["batch"] in result.outcomes["store"]["replays_skipped"]
