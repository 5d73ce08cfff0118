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
        ("ann colour=red\n", "roster:1: 'colour=red' is not a quota setting"),
        ("ann\nbob producer_byte_rate=-5\n", "roster:2: quota producer_byte_rate must be a positive"),
        ("ann request_percentage=lots\n", "must be a whole number, got 'lots'"),
    ],
)
def test_bad_rosters_name_what_to_fix(text, fragment):
    with pytest.raises(RosterError, match=fragment.replace(".", r"\.").replace("(", r"\(")):
        parse_roster(text, reserved=("instructor",))


def test_plan_grants_only_the_learners_prefix_and_sets_quotas():
    lines = plan(parse_roster("ann\nbob producer_byte_rate=5000  # slow\n"), Quota())
    assert "user ann: allow ALL on TOPIC prefix 'ann.'" in lines
    assert (
        "user ann: set client quota producer_byte_rate=1000000 (1 MB/s), consumer_byte_rate=2000000 (2 MB/s), "
        "request_percentage=50 (50% of a broker thread)" in lines
    )
    assert (
        "user bob: set client quota producer_byte_rate=5000 (5 kB/s), consumer_byte_rate=2000000 (2 MB/s), "
        "request_percentage=50 (50% of a broker thread)" in lines
    )


def test_remove_dry_run_lists_what_goes(capsys):
    assert main(["remove", "bob", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "user bob: delete every ACL of User:bob" in out and "topics and consumer groups starting with 'bob.'" in out
    assert main(["remove", "b ob", "--dry-run"]) == 2


def test_applying_without_address_or_password_says_what_is_missing(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("KAFKA_INSTRUCTOR_PASSWORD", raising=False)
    (tmp_path / "r.txt").write_text("ann\n")
    assert main([str(tmp_path / "r.txt"), "--bootstrap", "h:1"]) == 2
    assert "KAFKA_INSTRUCTOR_PASSWORD" in capsys.readouterr().err


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
    assert (tmp_path / "ann.env").stat().st_mode & 0o777 == 0o600
    assert first["ann"] != first["bob"]


def test_no_quota_prints_in_scientific_notation():
    """1e+06 bytes/s is a number an instructor has to decode; every line of the plan is integers."""
    lines = plan(parse_roster("ann\nbob producer_byte_rate=123456789\n"), Quota(consumer_byte_rate=10**9))
    text = "\n".join(lines)
    assert "e+" not in text and "producer_byte_rate=123456789 (123 MB/s)" in text and "(1 GB/s)" in text


def test_help_lists_every_command(capsys):
    from course_lib.workshop.__main__ import COMMAND_HELP, COMMANDS

    assert set(COMMAND_HELP) == set(COMMANDS)
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0
    for name in ("remove", "cluster", "broker"):
        assert f"python -m course_lib.workshop {name} ..." in out, out
    assert "ROSTER" in out and "1000000" in out and "e+" not in out
