"""What a fenced producer's requests get per version on Kafka 4.3.1, with the probe of
tests/wire/test_version_errors.py."""

import pytest

from tests.wire.client_probes import fenced_answers
from tests.wire.test_version_errors import FENCED_ANSWERS

pytestmark = pytest.mark.real_kafka


def test_a_zombie_gets_the_fencing_error_its_version_knows_on_kafka(cluster):
    assert fenced_answers(cluster.bootstrap_servers) == FENCED_ANSWERS
