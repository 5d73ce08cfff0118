"""A share group's configs through confluent-kafka's AdminClient on the wire cluster, as on Kafka
(tests/wire/group_config_probes.py; tests/real/test_describe_configs_real.py measures the same).
Before the wire served GROUP resources DescribeConfigs answered INVALID_REQUEST, DELETE of an
unknown name was refused, and the refusals had the simulator's words, not Kafka's."""

import pytest

from course_lib.wire import WireCluster
from tests.wire.group_config_probes import (
    EMPTY_NAME,
    ConfluentGroupConfigs,
    empty_group_name_answer,
    expected,
    group_config_answers,
)


@pytest.mark.timeout(120)
def test_group_configs_described_and_changed_as_on_kafka():
    with WireCluster(brokers=3, seed=1) as wire:
        assert group_config_answers(ConfluentGroupConfigs(wire.bootstrap_servers)) == expected()
        assert empty_group_name_answer(wire.bootstrap_servers) == EMPTY_NAME
