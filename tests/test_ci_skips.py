"""Under CI=true a skip for a part .ci/run installs fails and names the part (tests/conftest.py);
without CI, and for other reasons, it stays a skip."""

import pytest

TESTS = """
import pytest

def test_needs_the_sandbox():
    pytest.skip("no grading sandbox: the grading sandbox needs bubblewrap (bwrap), which is not installed")

@pytest.mark.skipif(True, reason="/usr/bin/chromium not found (apt-get install -y chromium)")
def test_needs_chromium():
    pass

def test_needs_a_writable_folder():
    pytest.skip("/opt is not writable by this user")

@pytest.mark.xfail(reason="Java is not relevant here")
def test_expected_to_fail():
    assert False
"""


@pytest.fixture
def suite(pytester):
    pytester.makeconftest("from tests.conftest import pytest_runtest_makereport  # noqa: F401")
    pytester.makepyfile(test_parts=TESTS)
    return pytester


def test_in_ci_a_missing_part_fails_and_names_it(suite, monkeypatch):
    monkeypatch.setenv("CI", "true")
    result = suite.runpytest("-ra")
    result.assert_outcomes(failed=1, errors=1, skipped=1, xfailed=1)
    result.stdout.fnmatch_lines(["*CI=true and bubblewrap (the grading sandbox) is missing*"])
    result.stdout.fnmatch_lines(["*CI=true and chromium is missing*"])
    result.stdout.fnmatch_lines(["SKIPPED*not writable by this user*"])


def test_on_a_learners_machine_it_skips_with_the_reason(suite, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    result = suite.runpytest("-ra")
    result.assert_outcomes(skipped=3, xfailed=1)
    result.stdout.fnmatch_lines(["SKIPPED*bubblewrap (bwrap), which is not installed*"])
    result.stdout.fnmatch_lines(["SKIPPED*chromium not found*"])


@pytest.mark.parametrize(
    "reason,part",
    [  # the reasons the suite's skips give, and ones that are not about a missing part
        ("no grading sandbox: the grading sandbox needs bubblewrap (bwrap), which is not installed", "bubblewrap"),
        ("real Kafka unavailable: java not found (apt-get install openjdk-17-jdk-headless maven)", "Java"),
        ("/usr/bin/chromium not found (apt-get install -y chromium)", "chromium"),
        ("node is not on PATH (Debian: apt-get install nodejs npm)", "node"),
        ("configurable-http-proxy could not be installed from npm into ~/.cache", "configurable-http-proxy"),
        ("Spark lab unavailable: Spark's Kafka connector jars are not available", "Spark"),
        ("the playwright package is not installed (pip install -e '.[browser]')", "Python extras"),
        ("could not import 'yaml': No module named 'yaml'", "Python extras"),
        ("make is not installed", None),
        ("/opt is not writable by this user", None),
        ("all tests skipped by +SKIP option", None),  # docstring examples that would start a cluster
    ],
)
def test_the_suites_skip_reasons_are_classified(reason, part):
    from tests.conftest import missing_part

    found = missing_part(reason)
    assert (found is None) if part is None else (found is not None and part in found), (reason, found)
