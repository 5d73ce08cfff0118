"""How ``make test`` splits the suite between its processes (pytest-xdist, ``-n 3`` on two cores).

Much of the suite's time is spent waiting - on Kafka's and the wire cluster's timeouts, on JVMs
and browsers starting - so a third process fills what the waits leave of the two cores. A group runs whole,
in collection order, in one process: a test file (its module fixtures start once), a notebook (its
cells share one kernel), or the files that share a session fixture or a shared result
(:mod:`course_lib.experiments.shared_results`), listed in :data:`SHARED_GROUPS`.

:class:`GroupScheduling` is xdist's scope scheduler with these groups as its scopes, taking them in
collection order, which :func:`run_long_groups_first` sets. (xdist's own ``xdist_group`` mark does
not work with pytest 9: it renames ``item._nodeid``, which pytest 9 no longer reads.)
"""

from xdist.scheduler import LoadScopeScheduling

SHARED_GROUPS = {
    # the fidelity matrix that tests/real computes and notebook 09 shows (the other files of
    # tests/real share its session cluster only: a process that runs one starts its own), and
    # the runs of its second part (course_lib/experiments/protocol_matrix.py: KIP-848 and share groups with
    # Java and librdkafka), which the tests of both clusters compute and tests/test_protocol_matrix.py
    # and notebook 09 read back - the readers last
    "real-kafka": (
        "tests/java_client/test_consumer_group_protocol_wire.py",
        "tests/java_client/test_share_groups_wire.py",
        "tests/real/test_consumer_group_protocol.py",
        "tests/real/test_real_scenarios.py",
        "tests/real/test_share_groups_real.py",
        "tests/wire/test_consumer_group_protocol.py",
        "tests/wire/test_share_groups_wire.py",
        "tests/test_protocol_matrix.py",
        "notebooks/09_",
    ),
    # the Spark session and the kill experiment that notebook 10 shows, and Spark Connect
    # (tests/spark/test_connect.py: a server of its own, the session's Kafka cluster shared): one
    # process, so no two Spark JVMs (each several cores' worth while it starts) run at once
    "spark": (
        "tests/spark/test_harness.py",
        "tests/spark/test_pipeline_rules.py",
        "notebooks/10_",
        "tests/spark/test_connect.py",
    ),
    # the by-design client differences on the wire (course_lib/experiments/by_design.py's shared table)
    "by-design": ("tests/wire/test_behaviour_probes_wire.py", "tests/wire/test_by_design.py"),
    # the offline site's build (``offline_site``, tests/conftest.py)
    "site": ("tests/test_browser_predictions.py", "tests/test_site.py"),
}

#: the longest groups start first, longest first (their time in a run's junit report, summed per
#: group), so no process is left with a long one at the end while the others idle; then the rest of
#: the workshop and of the real tier
LONG_GROUPS_FIRST = (
    "real-kafka",
    "site",
    "tests/test_browser_lab.py",
    "tests/wire/test_share_differential_wire.py",
    "spark",
    "tests/real/test_share_differential_real.py",
    "tests/real/test_fidelity_differential.py",
    "tests/workshop/test_workshop_cluster.py",
    "tests/workshop/",
    "tests/real/",
)


def group_of(nodeid: str) -> str:
    """The group a test runs in: a shared group, else its notebook or test file.

    >>> group_of("tests/real/test_real_scenarios.py::test_x[a]")
    'real-kafka'
    >>> group_of("tests/real/test_lab.py::test_x")
    'tests/real/test_lab.py'
    >>> group_of("notebooks/10_pyspark_exactly_once_lab.ipynb::Cell 3")
    'spark'
    >>> group_of("notebooks/02_acks_and_durability.ipynb::Cell 3")
    'notebooks/02_acks_and_durability.ipynb'
    >>> group_of("tests/test_log.py::test_append[1]")
    'tests/test_log.py'
    """
    path = nodeid.split("::", 1)[0]
    for group, prefixes in SHARED_GROUPS.items():
        if path.startswith(prefixes):
            return group
    return path


def _rank(group: str) -> int:
    return next((i for i, g in enumerate(LONG_GROUPS_FIRST) if group.startswith(g)), len(LONG_GROUPS_FIRST))


def place_in_group(nodeid: str) -> int:
    """Where a test runs within its shared group: in the order :data:`SHARED_GROUPS` lists its
    files (the computers of a shared result before its readers); 0 outside a shared group.

    >>> place_in_group("tests/wire/test_share_groups_wire.py::test_x") < place_in_group("notebooks/09_lab.ipynb::Cell 1")
    True
    >>> place_in_group("tests/test_log.py::test_append")
    0
    """
    path = nodeid.split("::", 1)[0]
    for prefixes in SHARED_GROUPS.values():
        for i, prefix in enumerate(prefixes):
            if path.startswith(prefix):
                return i
    return 0


def run_long_groups_first(items: list) -> None:
    """Puts the long groups first, and each shared group's files in their listed order, in place;
    sorted() is stable, so the rest keeps its order. The order is the same in every process (xdist
    checks that each one collected the same list)."""
    items[:] = sorted(items, key=lambda item: _rank(group_of(item.nodeid)))
    for group in SHARED_GROUPS:  # within the slots the group's tests already hold
        slots = [i for i, item in enumerate(items) if group_of(item.nodeid) == group]
        ordered = sorted((items[i] for i in slots), key=lambda item: place_in_group(item.nodeid))
        for i, item in zip(slots, ordered):
            items[i] = item


class GroupScheduling(LoadScopeScheduling):
    """Each group (:func:`group_of`) to one process, whole, in collection order: a process that
    is nearly done with its group is given the next one."""

    def __init__(self, config, log=None):
        config.option.loadscopereorder = False  # xdist would put the groups with most tests first
        super().__init__(config, log)

    def _split_scope(self, nodeid: str) -> str:
        return group_of(nodeid)
