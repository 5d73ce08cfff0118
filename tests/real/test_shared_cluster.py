"""Two learners on one shared cluster, as in a workshop: every scenario without broker faults,
run concurrently through ``connect()``, with the learner prefix applied exactly once and the
topic settings the scenario asked for being the ones the broker has.

(The bug this guards against: a scenario created ``alice.alice.x`` with its settings, then wrote
to ``alice.x``, which the broker auto-created with defaults - and the checker found nothing.)
"""

import threading

import pytest
from kafka.admin import ConfigResource, ConfigResourceType

from course_lib.backend import MissingFault
from course_lib.real.connect import connect
from course_lib.experiments.scenarios import run_scenario

pytestmark = pytest.mark.real_kafka

#: the scenarios whose faults are client-side only (crashes and freezes of the learner's own apps)
CLIENT_ONLY = [
    ("aborted_transaction", {}),
    ("zombie_fencing", {}),
    ("transaction_timeout", {}),
    ("consumer_crash", {"semantics": "at-least-once", "crash_point": "after_process"}),
    ("consume_transform_produce", {}),
    ("external_store_exactly_once", {}),
]
LEARNERS = ("alice", "bob")


@pytest.fixture(scope="module")
def runs(cluster):
    """{learner: [result, ...]} - both learners' scenarios run at the same time."""
    results: dict[str, list] = {name: [] for name in LEARNERS}
    errors: list = []

    def learner(name):
        shared = connect(cluster.bootstrap_servers, prefix=name)
        try:
            for scenario, params in CLIENT_ONLY:
                results[name].append(run_scenario(scenario, backend=shared, **params))
        except BaseException as e:  # reported by the test, not lost in the thread
            errors.append((name, e))

    threads = [threading.Thread(target=learner, args=(n,)) for n in LEARNERS]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    assert not errors, errors
    return results


def _once(name: str, learner: str) -> bool:
    others = [p for p in LEARNERS if p != learner]
    return (
        name.startswith(f"{learner}.")
        and not name.startswith(f"{learner}.{learner}.")
        and not any(f"{o}." in name for o in others)
    )


def test_every_scenario_passes_for_both_learners(runs):
    for learner, results in runs.items():
        assert len(results) == len(CLIENT_ONLY)
        for r in results:
            assert r.result.found == r.expected, (learner, r.name, r.result.summary())
            assert r.backend == "kafka"


def test_topics_groups_and_transactional_ids_carry_the_prefix_once(runs, cluster):
    admin = cluster.admin()
    try:
        topics = set(admin.list_topics())
        groups = {g[0] if isinstance(g, tuple) else g.get("group_id", g.get("group")) for g in admin.list_groups()}
    finally:
        admin.close()
    for learner, results in runs.items():
        for r in results:
            used = {op.topic for op in r.history if op.topic and not op.topic.startswith("sink:")}
            assert used and all(_once(t, learner) for t in used), (r.name, used)
            assert used <= topics, f"{r.name} used topics the broker does not have: {used - topics}"
            assert set(r.notes["created_topics"]) >= {t for t in used}, "written to a topic it never created"
            txn_ids = {op.value for op in r.history if op.f == "init_transactions"}
            assert all(_once(t, learner) for t in txn_ids), (r.name, txn_ids)
    learner_groups = {g for g in groups if g and not g.startswith("__") and "." in g}
    assert learner_groups, groups
    for g in learner_groups:
        assert any(_once(g, learner) for learner in LEARNERS), g
    assert not any(g.startswith(("alice.alice.", "bob.bob.")) for g in groups)


def test_the_broker_has_the_topic_settings_the_scenario_asked_for(runs, cluster):
    admin = cluster.admin()
    try:
        for results in runs.values():
            for r in results:
                for topic, asked in r.notes["created_topics"].items():
                    (described,) = admin.describe_topics([topic])
                    parts = described["partitions"]
                    assert len(parts) == asked["partitions"]
                    if "replication_factor" in asked:
                        assert all(len(p["replica_nodes"]) == asked["replication_factor"] for p in parts)
                    configs = admin.describe_configs(
                        [ConfigResource(ConfigResourceType.TOPIC, topic)], config_filter="all"
                    )
                    have = _config_values(configs, topic)
                    for key in ("min.insync.replicas", "unclean.leader.election.enable"):
                        if key in asked:
                            assert have[key] == str(asked[key]).lower(), (topic, key, have[key], asked[key])
    finally:
        admin.close()


def _config_values(described, topic: str) -> dict[str, str]:
    """kafka-python 3 answers {resource type: {name: {key: {... value ...}}}}."""
    for by_name in described.values():
        if topic in by_name:
            return {k: (v.get("value") if isinstance(v, dict) else v) for k, v in by_name[topic].items()}
    raise AssertionError(f"no configs for {topic} in {described}")


def test_broker_faults_on_a_shared_cluster_say_which_and_why(cluster):
    shared = connect(cluster.bootstrap_servers, prefix="carol")
    # (lost ACKs run through the learner's own proxy; without it they cannot happen either)
    no_proxy = connect(cluster.bootstrap_servers, prefix="carol", fault_proxy=False)
    with pytest.raises(MissingFault, match=r"lost_ack_retry needs the fault\(s\) \['lose_next_ack'\].*run elsewhere"):
        run_scenario("lost_ack_retry", backend=no_proxy)
    with pytest.raises(MissingFault, match=r"\['crash', 'pause', 'resume'\]"):
        run_scenario("leader_crash_after_ack", backend=shared)
