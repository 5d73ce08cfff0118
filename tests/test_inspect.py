"""The simulated cluster is read from outside through one read-only API (Cluster.inspect,
inspect_broker, leader_log): snapshots that cannot change the brokers, and no module outside the
simulator reaching into them."""

import ast
import dataclasses
from pathlib import Path

import pytest

from course_lib.broker import Cluster
from course_lib.clients import KafkaProducer

ROOT = Path(__file__).resolve().parent.parent / "course_lib"
#: the simulator itself: the broker, its event loop and network, its clients
# wire/ is the brokers' own network front end (it answers from their state, as a broker's request
# handlers do), except its backend adapter, which reads like any other client of the simulator
SIMULATOR = ("broker", "sim", "clients", "wire")
#: still reading internals: the differentials (in wire/ until they moved to experiments/) compare a
#: client's view with the simulated coordinators' state - a group's members and epochs, the
#: transaction log up to its high watermark - which inspect() does not show yet
NOT_YET: set[str] = {
    "experiments/differential.py",
    "experiments/consumer_protocol_differential.py",
    "experiments/java_differential.py",
}


def test_a_snapshot_is_frozen_and_does_not_follow_the_cluster():
    cluster = Cluster(brokers=3, seed=4)
    cluster.create_topic("t", min_insync_replicas=2)
    producer = KafkaProducer(bootstrap_servers=cluster, acks="all")
    before = cluster.inspect("t")
    producer.send("t", b"x")
    producer.flush()
    cluster.run_for(100)
    after = cluster.inspect("t")
    assert (before.hw, after.hw) == (0, 1) and [r.leo for r in after.replica_views] == [1, 1, 1]
    with pytest.raises(dataclasses.FrozenInstanceError):
        after.leader = 3  # type: ignore[misc]
    assert cluster.partition_state("t")["replicas"][after.leader]["hw"] == after.hw == 1


def test_an_offline_partition_has_no_hw_and_bad_names_are_refused():
    cluster = Cluster(brokers=1, seed=4)
    cluster.create_topic("t")
    cluster.crash(1)
    view = cluster.inspect("t")
    assert view.leader == 1 and not view.replica(1).up and (view.hw, view.lso) == (None, None)
    assert cluster.inspect_broker(1).up is False
    with pytest.raises(ValueError, match=r"t has partitions 0..0, not 3"):
        cluster.inspect("t", 3)
    with pytest.raises(ValueError, match="no topic 'u'"):
        cluster.inspect("u")
    with pytest.raises(ValueError, match="holds no replica"):
        view.replica(7)
    with pytest.raises(ValueError, match="no broker 9"):
        cluster.inspect_broker(9)


def _reads_internals(tree: ast.AST) -> list[str]:
    """``x.controller``, ``x._leader_replica``, ``x.brokers[...]``, ``x.partitions[...]`` and
    ``x.log.<hw|leo|batches|epochs>``: the broker's state, not its API."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("controller", "_leader_replica"):
            found.append(f"line {node.lineno}: .{node.attr}")
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr in ("brokers", "partitions")
        ):
            found.append(f"line {node.lineno}: .{node.value.attr}[...]")
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in ("hw", "leo", "batches", "epochs")
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "log"
        ):
            found.append(f"line {node.lineno}: .log.{node.attr}")
    return found


def test_no_module_outside_the_simulator_reads_broker_internals():
    offenders = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if (rel.parts[0] in SIMULATOR and str(rel) != "wire/backend.py") or str(rel) in NOT_YET:
            continue
        found = _reads_internals(ast.parse(path.read_text(), str(path)))
        if found:
            offenders[str(rel)] = found
    assert not offenders, f"read the cluster through cluster.inspect()/inspect_broker()/leader_log(): {offenders}"


def test_the_internals_check_can_fail():
    code = "leader = cluster.controller.partitions[tp].leader\nhw = cluster.brokers[1].partitions[tp].log.hw\n"
    assert len(_reads_internals(ast.parse(code))) == 5
