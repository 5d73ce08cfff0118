"""ApiVersions v5 on the wire cluster as on Kafka 4.4.0 (KIP-1242; the same probe runs on Kafka in
tests/real/test_api_versions_real.py): a request that names this cluster and this broker, or
names neither, gets the versions; one that names another gets REBOOTSTRAP_REQUIRED; one that
names only one of them gets INVALID_REQUEST; a refusal lists no API. So the Java 4.4 client, whose
first request is a v5, is answered at once, with no fallback to an older version."""

import logging

from kafka.protocol.api_key import ApiKey

from course_lib.wire.apis.api_versions import REBOOTSTRAP_REQUIRED

from .api_versions_probes import api_versions_v5_answers
from .conftest import record_versions
from .test_java_clients import _java_or_skip

INVALID_REQUEST = 42

#: case -> (error code, ApiVersions' own [min, max] if listed, APIs listed): measured on Kafka 4.4.0
V5_ANSWERS = {
    "neither": (0, (0, 5), "all"),
    "this cluster and node": (0, (0, 5), "all"),
    "another cluster": (REBOOTSTRAP_REQUIRED, None, 0),
    "another node": (REBOOTSTRAP_REQUIRED, None, 0),
    "a cluster id only": (INVALID_REQUEST, None, 0),
    "a node id only": (INVALID_REQUEST, None, 0),
}


def test_api_versions_v5_answers_as_kafka(wire):
    assert api_versions_v5_answers(wire.bootstrap_servers) == V5_ANSWERS


def test_java_client_negotiates_without_a_fallback(wire, monkeypatch, caplog):
    """The Java admin client (the lab's release) asks ApiVersions v5 on every connection, naming
    the cluster and node once it knows them: each is answered, none logged as unsupported."""
    import subprocess

    java = _java_or_skip()
    wire.create_topic("av", partitions=1, replication_factor=3)
    seen = record_versions(monkeypatch)
    with caplog.at_level(logging.WARNING, logger="course_lib.wire"):
        out = subprocess.run(
            [*java, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", wire.bootstrap_servers,
             "--describe", "--topic", "av"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert out.returncode == 0 and "av" in out.stdout, out.stdout + out.stderr[-2000:]
    assert seen[ApiKey.ApiVersions] == {5}, seen
    assert not [r.getMessage() for r in caplog.records if "unsupported" in r.getMessage()]
