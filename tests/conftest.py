"""Tiny fixtures shared by the simulator tests, the rule that CI skips nothing it installed, and
the rule that a test stops the kafka-python clients it starts."""

import gc
import os
import re
import shutil
import tempfile
import threading
import time
import warnings

import pytest

from course_lib.broker import Cluster
from course_lib.client_adapters import SHARE_CLIENTS, java_missing
from course_lib.clients import KafkaProducer
from tests.xdist_groups import run_long_groups_first

TOPIC = "t"

# sample submissions for the autograder's tests (broken JSON, infinite loops): graded by
# tests/test_grading.py in their own processes, never run by nbval
collect_ignore_glob = ["grading_samples/*"]


# What .ci/run installs, and how a test's skip reads when that part is missing (the reasons the
# tests give: tests/browser_support.py, tests/real/conftest.py, tests/spark/conftest.py, ...). A
# skip for anything else (a folder this user cannot write, no make) stays a skip everywhere.
CI_PARTS = (
    ("bubblewrap (the grading sandbox)", r"no grading sandbox|bubblewrap|\bbwrap\b"),
    ("Java 17+ and Maven", r"real Kafka unavailable|\bJava\b|\bJVM\b|\bMaven\b|Kafka cluster"),
    ("chromium", r"chromium"),
    ("configurable-http-proxy (npm)", r"configurable-http-proxy"),  # before node/npm: its reason says "npm"
    ("node and npm (the Pyodide runtime)", r"\bnode\b|\bnpm\b|Pyodide"),
    ("Spark and its Kafka connector jars", r"Spark lab unavailable|connector jars|Spark Connect|pyspark"),
    ("the Python extras (.ci/run: make .venv/.installed, pip install -e '.[all]')", r"pip install|could not import"),
)


def missing_part(reason: str) -> str | None:
    """The part .ci/run installs that a skip with this ``reason`` says is missing, or None."""
    for part, pattern in CI_PARTS:
        if re.search(pattern, reason):
            return part
    return None


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


def pytest_configure(config):
    """One directory of shared results per test run (:mod:`course_lib.experiments.shared_results`): an
    expensive result - the real fidelity table - is computed by the first test or notebook that
    asks for it and read back by the others (nbval's kernels inherit the variable).

    The controlling process (not an xdist worker) also marks the run's environment, which every
    process the tests start inherits, for the check at the end that none outlives the run; and
    under ``CI=true`` it freezes the course cache: .ci/run prepared every download, so a test that
    finds one missing fails naming it (course_lib.cache.CacheMissing) instead of downloading."""
    from course_lib.experiments.shared_results import ENV

    from tests import process_support

    process_support.install(config)
    _kernels_over_ipc()
    if in_ci() and not hasattr(config, "workerinput"):
        os.environ.setdefault("COURSE_CACHE_FROZEN", "1")
    if not hasattr(config, "workerinput"):
        from course_lib.spark import scratch

        # nbval SIGKILLs each notebook's kernel with its process group, so notebook 10's kernel
        # cannot remove its Spark scratch folder; what a killed process left is removed here.
        config.add_cleanup(scratch.remove_abandoned)

    if not os.environ.get(ENV):
        folder = os.environ[ENV] = tempfile.mkdtemp(prefix="course-shared-results-")

        def cleanup():
            os.environ.pop(ENV, None)
            shutil.rmtree(folder, ignore_errors=True)

        config.add_cleanup(cleanup)


def _kernels_over_ipc() -> None:
    """nbval's notebook kernels over Unix sockets, not TCP. For TCP, jupyter_client picks five
    free ports and the kernel binds them a moment later; any other process of the suite (a broker,
    a wire cluster, another kernel) that binds a free port in between can take one, and the kernel
    dies before it answers (jupyter/jupyter_client#487; its port cache is per process). Seen as
    notebook 06's 25 setup errors, "Kernel died before replying to kernel_info", with two suites
    running at once."""
    import uuid

    import nbval.kernel
    from jupyter_client.manager import KernelManager
    from traitlets import CaselessStrEnum, default

    from course_lib.experiments.shared_results import ENV

    class IpcKernelManager(KernelManager):
        transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)

        @default("ip")
        def _ip_default(self) -> str:
            # jupyter_client's default, "kernel-ipc", is relative to the kernel's folder: two
            # notebooks' kernels would share its sockets. The run's own folder is removed at its end.
            return os.path.join(os.environ.get(ENV) or tempfile.gettempdir(), f"kernel-{uuid.uuid4().hex}-ipc")

    nbval.kernel.KernelManager = IpcKernelManager  # what nbval.kernel.start_new_kernel builds


def _jvm_missing_reason() -> str | None:
    from course_lib.clusters import jars

    try:
        jars.check_jvm_tools()
    except jars.JvmToolMissing as e:
        return str(e).splitlines()[0] + " (apt-get install openjdk-17-jdk-headless maven)"
    return None


@pytest.hookimpl(optionalhook=True)  # an xdist hook: plain `pytest` runs without it
def pytest_xdist_make_scheduler(config, log):
    """``make test``'s processes take the suite's groups (tests/xdist_groups.py) one by one."""
    from tests.xdist_groups import GroupScheduling

    return GroupScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    """Puts the long groups first for ``make test``'s processes (tests/xdist_groups.py); without Java 17+ or
    Maven every ``real_kafka`` test (tests/real, tests/workshop, the real benchmark) is skipped
    with the reason, rather than failing to start a cluster."""
    run_long_groups_first(items)
    if not any("real_kafka" in item.keywords for item in items):
        return
    reason = _jvm_missing_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=f"real Kafka unavailable: {reason}")
    for item in items:
        if "real_kafka" in item.keywords:
            item.add_marker(skip)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under ``CI=true`` a skip for a part .ci/run installs is a failure that names the part: a CI
    run that quietly skipped the sandbox or the browser tests would pass without testing them. On
    a learner's machine it stays a skip with its reason (``-ra`` lists them)."""
    outcome = yield
    report = outcome.get_result()
    if not (report.skipped and in_ci()) or hasattr(report, "wasxfail"):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    part = missing_part(reason)
    if part:
        report.outcome = "failed"
        report.longrepr = f"CI=true and {part} is missing (.ci/run installs it), so this may not skip: {reason}"


#: kafka-python's own threads: a producer's sender, the I/O loop of a consumer or admin client
KAFKA_CLIENT_THREAD = re.compile(r"-network-thread$|^kafka-io-")


@pytest.fixture(autouse=True)
def kafka_clients_closed():
    """A kafka-python client a test starts is stopped by the end of the test (fixtures of a wider
    scope start theirs before this snapshot). A client left running keeps reconnecting to a
    cluster that is gone, for the rest of the session, and its sockets count against whichever
    test checks for leaks next: the test that left it is the one to fail, by name."""
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 10  # a bound: a closing client's thread winds down on its own
    while True:
        left = [t for t in threading.enumerate() if t not in before and KAFKA_CLIENT_THREAD.search(t.name)]
        if not left or time.monotonic() > deadline:
            break
        gc.collect()  # a client dropped without close() stops when it is collected
        time.sleep(0.1)
    assert not left, f"kafka-python clients left running (close them, or the backend's close_clients()): {left}"


@pytest.fixture(params=[c for c in SHARE_CLIENTS if c != "simulator"])
def share_client(request) -> str:
    """Each wall-clock client of the share-group workload (its contract:
    :func:`course_lib.client_adapters.share_consumer`), by name; Java's skips without a JVM."""
    if request.param == "java" and java_missing():
        pytest.skip(java_missing())
    return request.param


@pytest.fixture
def cluster():
    """3 brokers, one RF=3 partition, min.insync.replicas=2, lab-friendly failover timing."""
    c = Cluster(
        brokers=3,
        seed=7,
        broker_session_timeout_ms=3000,
        broker_heartbeat_interval_ms=500,
        replica_lag_time_max_ms=2000,
    )
    c.create_topic(TOPIC, partitions=1, replication_factor=3, min_insync_replicas=2)
    return c


@pytest.fixture
def consumer_cluster():
    """3 brokers, topic ``in`` (RF=3, 2 partitions), 10 records m-0..m-9 alternating partitions."""
    c = Cluster(3, seed=3, group_initial_rebalance_delay_ms=0)
    c.create_topic("in", partitions=2, min_insync_replicas=2)
    producer = KafkaProducer(bootstrap_servers=c)
    for i in range(10):
        producer.send("in", f"m-{i}".encode(), partition=i % 2)
    producer.flush()
    return c


@pytest.fixture
def make_producer(cluster):
    def make(**config):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return KafkaProducer(bootstrap_servers=cluster, **config)

    return make


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium under Playwright, one per test module (tests/browser_support.py)."""
    from playwright.sync_api import sync_playwright

    from tests.browser_support import launch_chromium

    with sync_playwright() as p:
        b = launch_chromium(p)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="session")
def offline_site(tmp_path_factory):
    """The offline copy of the static site (``make site-offline``: the Pyodide runtime inside it),
    built once per test run for every test that serves it (tests/test_site.py,
    tests/test_browser_predictions.py): a build takes minutes. Tests read it, never change it.
    Skipped, with the reason, without node and npm."""
    from tools import site_build
    from tools.pyodide_local import missing_tools

    reason = missing_tools()
    if reason:
        print(f"skipping site tests: {reason}")
        pytest.skip(reason)
    return site_build.build(tmp_path_factory.mktemp("site") / "_site", offline=True)
