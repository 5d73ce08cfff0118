"""One Java driver process per test module (a JVM costs a second or two to start); a wire
cluster per test (the plugin's ``wire_cluster``: seeded, stopped after the test)."""

import pytest

from course_lib.wire.pytest_plugin import wire_cluster  # noqa: F401 - the plugin's fixture
from tests.java_client import support


@pytest.fixture(scope="module")
def driver():
    yield from support.module_driver()
