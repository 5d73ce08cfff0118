"""Kafka's broker configs on the wire cluster (issue 39): settable by Kafka's names
(``WireCluster(config=...)``, ``--config k=v``) and acting as Kafka's - topic auto-creation,
num.partitions, default.replication.factor, the classic group session-timeout bounds - plus the
checks Kafka makes on offset commits. The expected answers are Kafka 4.3.1's, asserted on a real
cluster with the same probes by tests/real/test_broker_configs_real.py."""

import io
import json
import re

import pytest

from course_lib.wire import WireCluster
from course_lib.wire.__main__ import main

from .client_probes import connect
from .broker_config_probes import (
    _metadata,
    auto_creation_answers,
    commit_to_unknown_partitions,
    committed_offset_roundtrip,
    join_session_timeout_codes,
)

#: Kafka 4.3.1's answers with its defaults (the lab's default.replication.factor=3): the first
#: answer is UNKNOWN_TOPIC_OR_PARTITION although the topic is being created (KRaft creates it
#: asynchronously; ZooKeeper-era brokers answered LEADER_NOT_AVAILABLE)
AUTO_CREATION = {"first answer": 3, "partitions": 1, "replicas": 3, "not allowed": 3, "invalid name": 17}
#: session.timeout.ms -> JoinGroup's error: INVALID_SESSION_TIMEOUT (26) outside [6000, 1800000]
SESSION_TIMEOUTS = {3000: 26, 1_800_001: 26, 10_000: 0}
#: (topic exists, partition, error): UNKNOWN_TOPIC_OR_PARTITION for both, plain and transactional
UNKNOWN_PARTITIONS = {kind: [(False, 0, 3), (True, 99, 3)] for kind in ("OffsetCommit", "TxnOffsetCommit")}
ROUNDTRIP = (5, "batch 7 of job 3", 0)


def test_topics_are_auto_created_as_kafka_does(wire):
    assert auto_creation_answers(wire.bootstrap_servers) == AUTO_CREATION


def test_join_group_session_timeout_bounds(wire):
    assert join_session_timeout_codes(wire.bootstrap_servers) == SESSION_TIMEOUTS


def test_a_probe_finds_a_coordinator_that_moved_again(monkeypatch):
    """On a shared cluster a group's coordinator moves when a test kills or pauses a broker: the
    probes ask again at the new one (CI once saw NOT_COORDINATOR where the join expected 0)."""
    from . import client_probes

    class Answer:
        def __init__(self, code):
            self.error_code = code

    class Conn:
        def __init__(self, codes):
            self.codes, self.closed = list(codes), False

        def request(self, request, version):
            return self.codes.pop(0)

        def close(self):
            self.closed = True

    class Response:
        @staticmethod
        def decode(code, version, header):
            return Answer(code)

    moved, found = Conn([16]), Conn([14, 0])
    monkeypatch.setattr(client_probes, "_coordinator", lambda *key: found)
    raw = [moved]
    assert client_probes.ask_coordinator(raw, "b:1", "g", 0, object(), Response).error_code == 0
    assert moved.closed and raw == [found] and not found.codes
    # and an answer that is not a coordinator's error is returned at once
    raw = [Conn([26, 0])]
    assert client_probes.ask_coordinator(raw, "b:1", "g", 0, object(), Response).error_code == 26


def test_commits_to_unknown_partitions_are_refused(wire):
    wire.create_topic("known", replication_factor=3)
    assert commit_to_unknown_partitions(wire.bootstrap_servers, "known") == UNKNOWN_PARTITIONS


def test_committed_offsets_keep_metadata_and_leader_epoch(wire):
    wire.create_topic("meta", replication_factor=3)
    assert committed_offset_roundtrip(wire.bootstrap_servers, "meta") == ROUNDTRIP


def test_configs_by_kafka_names_change_what_clients_see(no_leaks):
    config = {
        "auto.create.topics.enable": "false",
        "num.partitions": "4",
        "default.replication.factor": "2",
        "group.min.session.timeout.ms": "1000",
    }
    with WireCluster(brokers=3, seed=1, config=config) as wire:
        assert metadata_error(wire, "never-created") == 3
        assert "never-created" not in wire.call(lambda: dict(wire.cluster.controller.configs))
        assert join_session_timeout_codes(wire.bootstrap_servers)[3000] == 0  # now inside the bounds
        wire.create_topic("defaults", partitions=-1, replication_factor=-1)
        info = wire.partition_info("defaults", 3)
        assert (len(wire.partitions_of("defaults")), len(info["replica_nodes"])) == (4, 2)


def metadata_error(wire, topic: str) -> int:
    """Metadata v12's error for ``topic``, auto-creation allowed by the client."""
    host, port = wire.bootstrap_servers.split(",")[0].rsplit(":", 1)
    client = connect(host, int(port))
    try:
        return _metadata(client, topic, allow=True).error_code
    finally:
        client.close()


@pytest.mark.parametrize(
    "config, message",
    [
        ({"num.partition": "4"}, "unknown broker config 'num.partition' (did you mean 'num.partitions'?)"),
        ({"auto.create.topics.enable": "yes"}, "Expected value to be either true or false"),
        ({"num.partitions": "0"}, "num_partitions must be >= 1"),
        ({"group.min.session.timeout.ms": "9", "group.max.session.timeout.ms": "8"}, "must not exceed"),
    ],
)
def test_bad_configs_are_refused_with_what_to_do(config, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        WireCluster(brokers=1, config=config)


def test_config_given_twice_is_refused():
    with pytest.raises(ValueError, match="given twice"):
        WireCluster(brokers=1, config={"num.partitions": 2}, num_partitions=3)


def test_cli_takes_config(capsys):
    with pytest.raises(SystemExit):
        main(["--config", "num.partitions"], stdin=iter([]))
    assert "expected NAME=VALUE" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--config", "no.such.config=1"], stdin=iter([]))
    assert "unknown broker config 'no.such.config'" in capsys.readouterr().err
    out = io.StringIO()
    assert (
        main(["--brokers", "1", "--config", "num.partitions=3"], stdin=iter(["topic t\n", "state\n"]), stdout=out) == 0
    )
    state = json.loads(out.getvalue().splitlines()[-1])
    assert sorted(p["partition"] for p in state["partitions"] if p["topic"] == "t") == [0, 1, 2]
