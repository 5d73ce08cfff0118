"""Every answer follows what its request version knows (issue 30): the error codes Kafka's broker
replaces for older request versions (course_lib/wire/version_errors.py), one test per mapping,
and the table consulted by every answer of the wire front end."""

import pytest
from kafka import errors as Errors
from kafka.protocol.api_key import ApiKey
from kafka.protocol.producer import ProduceResponse

from course_lib.wire.apis.api_versions import SUPPORTED_VERSIONS
from course_lib.wire.apis.common import build
from course_lib.wire.version_errors import DOWNGRADES, answer_code, downgrade_codes

from .client_probes import fenced_answers

#: what Kafka 4.3.1 answers a fenced producer, per API and version (measured on both clusters)
FENCED_ANSWERS = {"AddOffsetsToTxn v1": 47, "AddOffsetsToTxn v2": 90, "EndTxn v1": 47, "EndTxn v2": 90}


@pytest.mark.parametrize("rule", DOWNGRADES, ids=lambda r: f"{r.api.name}-{r.error.__name__}-below-{r.below}")
def test_each_mapping_applies_below_its_version_only(rule):
    lo, hi = SUPPORTED_VERSIONS.get(rule.api, (0, 12))
    for version in range(lo, hi + 1):
        expected = rule.instead.errno if rule.below is None or version < rule.below else rule.error.errno
        assert answer_code(rule.api, version, rule.error.errno) == expected, (rule, version)
    # the mapping is for its API only: another API keeps the code
    other = ApiKey.Metadata if rule.api != ApiKey.Metadata else ApiKey.Fetch
    assert answer_code(other, lo, rule.error.errno) == rule.error.errno


def test_every_mapping_names_an_advertised_api_and_a_code_the_version_knows():
    for rule in DOWNGRADES:
        assert rule.api in SUPPORTED_VERSIONS, rule
        assert rule.instead.errno != rule.error.errno and rule.where, rule
        # what a downgrade gives is never itself downgraded again for the same version
        assert not any(r.api == rule.api and r.error is rule.instead for r in DOWNGRADES), rule


def test_codes_without_a_rule_and_nested_answers():
    assert answer_code(ApiKey.Produce, 3, Errors.NotLeaderForPartitionError.errno) == 6
    values = {
        "error_code": Errors.ProducerFencedError.errno,
        "topics": [{"partitions": [{"partition_error_code": Errors.ProducerFencedError.errno, "records": b"x"}]}],
        "producer_id": Errors.ProducerFencedError.errno,  # not an error code: left alone
    }
    assert downgrade_codes(ApiKey.AddPartitionsToTxn, 1, values) == {
        "error_code": 47,
        "topics": [{"partitions": [{"partition_error_code": 47, "records": b"x"}]}],
        "producer_id": 90,
    }


def test_fields_beyond_a_version_are_not_sent():
    """A Produce v3 answer carries no log_start_offset (v5+) nor record errors (v8+): the bytes
    decode at v3 and end where v3's fields end."""
    values = {
        "responses": [
            {
                "name": "t",
                "partition_responses": [
                    {
                        "index": 0,
                        "error_code": 0,
                        "base_offset": 7,
                        "log_append_time_ms": -1,
                        "log_start_offset": 3,
                        "record_errors": [],
                        "error_message": "x" * 50,
                    }
                ],
            }
        ],
        "throttle_time_ms": 0,
    }
    v3, v8 = (bytes(build(ProduceResponse, v, **values).encode()) for v in (3, 8))
    assert b"x" * 50 in v8 and b"x" not in v3
    assert ProduceResponse.decode(v3, version=3).responses[0].partition_responses[0].base_offset == 7


def test_a_zombie_gets_the_fencing_error_its_version_knows(wire):
    """End to end on the wire, as on Kafka 4.3.1 (tests/real/test_confluent_version_errors.py):
    EndTxn and AddOffsetsToTxn v1 from a fenced producer get INVALID_PRODUCER_EPOCH, v2+
    PRODUCER_FENCED."""
    assert fenced_answers(wire.bootstrap_servers) == FENCED_ANSWERS
