"""ApiVersions on Kafka 4.4.0 (the lab's release), read at test time: v5's ClusterId and NodeId
check with the probe and the expectation of tests/wire/test_api_versions.py, and every API the
wire cluster implements next to Kafka's advertised [min, max]."""

import pytest
from kafka.protocol.api_key import ApiKey

from course_lib.wire.apis.api_versions import SASL_VERSIONS, SUPPORTED_VERSIONS
from tests.wire.api_versions_probes import advertised_versions, api_versions_v5_answers
from tests.wire.test_api_versions import V5_ANSWERS

pytestmark = pytest.mark.real_kafka

#: what the wire cluster advertises, with users (SASL) or without
WIRE_VERSIONS = {**SUPPORTED_VERSIONS, **SASL_VERSIONS}

#: APIs whose newest version on Kafka 4.4.0 the wire cluster does not advertise, and why: the
#: version changes what the wire cluster would have to implement, and no client the course runs
#: needs it (each client negotiates down to the wire's max, as it does with an older broker)
LOWER_MAX = {
    ApiKey.OffsetCommit: "v10 names topics by id only (KIP-848); not implemented",
    ApiKey.OffsetFetch: "v10 names topics by id only (KIP-848); not implemented",
    ApiKey.DescribeGroups: "v6 answers GROUP_ID_NOT_FOUND for an unknown group (KIP-1043); not implemented",
    ApiKey.ListGroups: "v5 adds the TypesFilter (KIP-848); not implemented",
    ApiKey.DeleteTopics: "v6 names topics by id; not implemented",
    ApiKey.AddPartitionsToTxn: "v4+ is the brokers' own call to the coordinator (VerifyOnly, batches); no client sends it",
    ApiKey.TxnOffsetCommit: "v6 names topics by id only (KIP-1319); not implemented",
    ApiKey.DeleteGroups: "v3 adds a per-group ErrorMessage; not implemented",
}

#: APIs whose oldest advertised version is newer on the wire cluster, and why
HIGHER_MIN = {
    ApiKey.Produce: "Kafka 4 advertises v0 for librdkafka (KAFKA-18659) yet refuses v0-2 (KIP-896); the wire advertises what it answers",
}


def test_api_versions_v5_answers_on_kafka(cluster):
    assert api_versions_v5_answers(cluster.bootstrap_servers) == V5_ANSWERS


def test_wire_advertises_no_version_kafka_lacks(cluster):
    kafka = advertised_versions(cluster.bootstrap_servers)
    table = {key: (WIRE_VERSIONS[key], kafka.get(key)) for key in sorted(WIRE_VERSIONS)}
    missing = [ApiKey(key).name for key, (_, theirs) in table.items() if theirs is None]
    assert not missing, missing
    beyond = {ApiKey(k).name: v for k, v in table.items() if not v[1][0] <= v[0][0] <= v[0][1] <= v[1][1]}
    assert not beyond, beyond
    assert {k for k, (ours, theirs) in table.items() if ours[1] < theirs[1]} == set(LOWER_MAX), table
    assert {k for k, (ours, theirs) in table.items() if ours[0] > theirs[0]} == set(HIGHER_MIN), table
