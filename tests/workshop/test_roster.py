import pytest

from course_lib.real.security import ClusterAuth, SecurityConfigError
from course_lib.workshop.__main__ import main
from course_lib.workshop.roster import Quota, RosterError, parse_roster, plan


def test_roster_skips_comments_and_blank_lines():
    assert [lr.name for lr in parse_roster("ann\n\n# x\nbob  # second\n")] == ["ann", "bob"]


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("ann\nbob\nAnn\n", "line 1"),  # duplicate, case-insensitively
        ("ann\nb ob\n", "roster:2"),  # illegal character
        ("ann.b\n", "contains '.'"),  # would share a prefix
        ("# nobody\n", "no learner names"),
        ("instructor\n", "instructor's user name"),
    ],
)
def test_bad_rosters_name_what_to_fix(text, fragment):
    with pytest.raises(RosterError, match=fragment.replace(".", r"\.").replace("(", r"\(")):
        parse_roster(text, reserved=("instructor",))


def test_plan_grants_only_the_learners_prefix():
    lines = plan(parse_roster("ann\n"), Quota())
    assert "user ann: allow ALL on TOPIC prefix 'ann.'" in lines
    assert any("producer_byte_rate=1e+06" in line for line in lines)


def test_dry_run_prints_the_plan_and_bad_roster_exits_2(tmp_path, capsys):
    roster = tmp_path / "roster.txt"
    roster.write_text("ann\nbob\n")
    assert main([str(roster), "--dry-run"]) == 0
    assert "user bob: allow ALL on GROUP prefix 'bob.'" in capsys.readouterr().out
    roster.write_text("ann\nann\n")
    assert main([str(roster), "--dry-run"]) == 2
    assert "already on line 1" in capsys.readouterr().err


def test_broker_security_settings():
    auth = ClusterAuth(admin_password="pw")
    props = auth.broker_properties()
    assert props["authorizer.class.name"].endswith("StandardAuthorizer")
    assert props["super.users"] == "User:instructor;User:ANONYMOUS"
    assert auth.format_arguments() == ["--add-scram", "SCRAM-SHA-512=[name=instructor,password=pw]"]
    with pytest.raises(SecurityConfigError, match="password"):
        ClusterAuth(admin_password="a,b")


def test_connection_files_keep_passwords_across_runs(tmp_path):
    from course_lib.workshop.credentials import (
        learner_passwords,
        write_connection_files,
    )

    learners = parse_roster("ann\nbob\n")
    first = learner_passwords(tmp_path, learners)
    write_connection_files(tmp_path, "h:9092", learners, first)
    assert learner_passwords(tmp_path, learners) == first
    assert "KAFKA_SASL_USERNAME=ann" in (tmp_path / "ann.env").read_text()
    assert first["ann"] != first["bob"]
