"""The grading sandbox against hostile submissions: each attack is contained and costs only its
author's points, a correct submission graded in the same run gets full marks, and the run ends
within its time limits. Each hostile notebook answers ex05_q1 correctly only when its attack
failed *as seen from inside*, and the test also looks from outside (files, the listening port,
leftover processes, a canary process).

The attacks are real (a fork bomb, 2 GB of output, writes into the course package, ...), so they
run only where the sandbox works; they are never graded with --no-sandbox.
"""

import csv
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

from course_lib.grading import sandbox
from tests.grading_support import correct_submission

ROOT = Path(__file__).resolve().parents[1]
SECRET = "s3cret-for-the-hostile-test-9f2c"
SLEEP = "100017"  # a recognisable argument for the detached child, to find it afterwards
# the memory hog touches ~1 GB before its 2 GB address space is refused: several seconds of page faults
# on a loaded 2-core machine (3 s was too short)
CELL_S = 8

PROBLEM = sandbox.probe()  # None where the sandbox works; under CI=true a skip for it fails (tests/conftest.py)
# not module-wide: the test of the grader without bubblewrap runs anywhere
needs_sandbox = pytest.mark.skipif(PROBLEM is not None, reason=f"no grading sandbox: {PROBLEM}")

CORRECT_ANSWER = 'ex05_q1 = {"after_poll", "mid_batch"}'
CORRECT_LOOP = """
    empty = 0
    while empty < 2:
        records = [r for rs in consumer.poll(timeout_ms=500).values() for r in rs]
        if not records:
            empty += 1
            continue
        empty = 0
        for record in records:
            sink.write(record)
        consumer.commit()
"""


def notebook(path: Path, attack: str, answer_if: str = "True", in_function: str = "", answer_first=False) -> None:
    """A submission: ``attack`` in a cell, then ex05_q1 answered correctly only if ``answer_if``
    holds after it, then a correct consume_at_least_once that first runs ``in_function``."""
    body = "".join("    " + line + "\n" for line in in_function.strip().splitlines())
    cells = [
        "import warnings; warnings.simplefilter('ignore')\nimport os, sys, socket, subprocess, signal\ncontained = True"
    ]
    if answer_first:
        cells.append(CORRECT_ANSWER)
    cells += [
        attack,
        f"ex05_q1 = {{'after_poll', 'mid_batch'}} if ({answer_if}) else set()" if not answer_first else "pass",
        f"def consume_at_least_once(consumer, sink):\n{body}{CORRECT_LOOP}",
    ]
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path)


def attempts(paths) -> str:
    """Code that tries to write each path and sets contained = False if any write works."""
    return "\n".join(
        f"try:\n    open({str(p)!r}, 'w').write('pwned')\n    contained = False\nexcept OSError:\n    pass"
        for p in paths
    )


def leftover_sleepers() -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:2] == [b"sleep", SLEEP.encode()]:
                found.append(int(pid))
        except OSError:
            pass
    return found


@needs_sandbox
def test_hostile_submissions_are_contained(tmp_path):
    submissions, out_dir, home = tmp_path / "submissions", tmp_path / "out", tmp_path / "home"
    for d in (submissions, out_dir, home):
        d.mkdir()
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text(SECRET)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    canary = subprocess.Popen(["sleep", "300"])
    package = Path(sandbox.COURSE_PACKAGE)
    targets = [package / "grading" / "pwned.py", submissions / "pwned.ipynb", out_dir / "pwned.txt", home / "pwned"]

    correct_submission("05", submissions / "correct.ipynb")
    detached = f"subprocess.Popen(['sleep', '{SLEEP}'], start_new_session=True, stdout=sys.stdout, stderr=sys.stderr)"
    notebook(submissions / "detached_child.ipynb", detached, in_function=detached)
    notebook(
        submissions / "fork_bomb.ipynb",
        "while True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
        answer_first=True,
    )
    notebook(
        submissions / "huge_output.ipynb",
        "for _ in range(2048):\n    sys.stdout.write('x' * 2**20)",
        # 64 MB once per evaluation: past the 16 MB cap every write fails anyway, and building 64 MB
        # on every call (dozens per hidden seed) took the 20 s evaluation limit on a loaded machine
        in_function=(
            "if not getattr(consume_at_least_once, 'flooded', False):\n"
            "    consume_at_least_once.flooded = True\n"
            "    try:\n        print('y' * 2**26)\n    except OSError:\n        pass"
        ),
    )
    notebook(
        submissions / "memory_hog.ipynb",
        # one 8 GiB request: refused at once under the 2 GiB address-space limit, so the verdict
        # does not depend on how fast a loaded machine can zero pages (without the limit it
        # would touch 8 GiB and time out: the test fails either way)
        "hog = bytearray(2**33)",
        in_function="try:\n    hog = bytearray(2**33)\nexcept MemoryError:\n    pass",
    )
    notebook(submissions / "writes_everywhere.ipynb", attempts(targets), "contained", in_function=attempts(targets))
    read_secret = (
        f"for where in ({str(secret_file)!r}, {str(package / 'grading' / 'hidden.py')!r}):\n"
        f"    try:\n        contained &= {SECRET!r} not in open(where).read()\n    except OSError:\n        pass\n"
        f"contained &= {SECRET!r} not in str(os.environ)\n"
        f"try:\n    import course_lib.grading.hidden\n    contained = False\nexcept ImportError:\n    pass"
    )
    notebook(submissions / "reads_secret.ipynb", read_secret, "contained")
    connect = (
        f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2).send(b'pwned')\n"
        f"    contained = False\nexcept OSError:\n    pass"
    )
    notebook(
        submissions / "connects.ipynb", connect, "contained", in_function=connect.replace("contained = False", "pass")
    )
    kill = (
        f"for pid in (os.getppid(), {canary.pid}):\n    try:\n        os.kill(pid, signal.SIGKILL)\n"
        f"    except OSError:\n        pass"
    )
    notebook(submissions / "kills.ipynb", kill, in_function=kill)
    nbformat.write(
        nbformat.v4.new_notebook(
            cells=[
                nbformat.v4.new_code_cell(c)
                for c in [
                    "import warnings; warnings.simplefilter('ignore')",
                    "while True:\n    pass\nex05_q1 = {'after_poll', 'mid_batch'}",
                    f"def consume_at_least_once(consumer, sink):\n{CORRECT_LOOP}",
                ]
            ]
        ),
        submissions / "slow_answer.ipynb",
    )

    expected = {
        name: 3
        for name in (
            "correct",
            "detached_child",
            "fork_bomb",
            "huge_output",
            "memory_hog",
            "writes_everywhere",
            "reads_secret",
            "connects",
            "kills",
        )
    }
    expected["correct"] = 5  # every question of set 05, derived from its solution
    expected["slow_answer"] = 2  # its ex05_q1 cell never finishes
    started = time.monotonic()
    try:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "course_lib.grading",
                "grade",
                str(submissions),
                "--out",
                str(out_dir / "scores.csv"),
                "--timeout",
                "25",
                "--cell-timeout",
                str(CELL_S),
                "--implementation-timeout",
                "20",
                "--jobs",
                "2",
                "--secret-file",
                str(secret_file),
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=240,
            env={**os.environ, "HOME": str(home), "COURSE_GRADING_SECRET": SECRET},
        )
        elapsed = time.monotonic() - started
        accepted = []
        try:
            accepted.append(listener.accept())
        except BlockingIOError:
            pass
        canary_alive = canary.poll() is None
    finally:
        canary.kill()
        canary.wait()
        listener.close()
        for pid in leftover_sleepers():  # only if the test failed: what the detached child left
            os.kill(pid, signal.SIGKILL)
    assert result.returncode == 0, result.stderr
    # ten notebooks, two at a time, the slowest ~1 cell timeout + 1 evaluation: far below 10 x 25 s
    assert elapsed < 120, elapsed
    rows = {r["learner"]: r for r in csv.DictReader((out_dir / "scores.csv").open())}
    feedback = {p.stem: p.read_text() for p in (out_dir / "scores_feedback").glob("*.txt")}
    got = {learner: float(row["total"]) for learner, row in rows.items()}
    if got != expected:  # the whole feedback of each surprise (an assert message would be cut short)
        pytest.fail(
            f"scores {got}, expected {expected}:\n" + "\n".join(feedback[k] for k in got if got[k] != expected.get(k))
        )
    for path in targets:
        assert not path.exists(), f"a submission wrote {path}"
    assert accepted == [], "a submission reached a port on the grader's 127.0.0.1"
    assert canary_alive, "a submission killed a process outside its sandbox"
    assert leftover_sleepers() == [], "a detached child outlived its sandbox"
    assert not any(SECRET in text for text in feedback.values())
    assert "more than 16 MB of output" in feedback["huge_output"]
    assert "MemoryError" in feedback["memory_hog"]
    assert (
        f"did not finish within {CELL_S} s" in feedback["slow_answer"]
        and "ex05_q1: not attempted" not in feedback["slow_answer"]
    )
    assert "cell In [2]" in feedback["slow_answer"]
    assert "WARNING" not in feedback["correct"]


def test_two_graders_never_run_sandboxes_as_the_same_uid(monkeypatch):
    """Each grader process counts uids from the same start (two xdist workers, two suites): the
    claim keeps their sandboxes apart, or one's learner processes count against the other's
    RLIMIT_NPROC (detached_child's fork() failed with EAGAIN when two suites ran at once)."""
    import itertools

    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(sandbox, "_uids", itertools.count())
    with sandbox._sandbox_uid() as first:
        monkeypatch.setattr(sandbox, "_uids", itertools.count())  # another grader's counter
        with sandbox._sandbox_uid() as second:
            assert second != first
    monkeypatch.setattr(sandbox, "_uids", itertools.count())
    with sandbox._sandbox_uid() as again:
        assert again == first  # released when its sandbox ended


def test_without_bubblewrap_the_grader_refuses_with_one_message_and_no_sandbox_warns(tmp_path):
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    correct_submission("05", submissions / "correct.ipynb")
    command = [sys.executable, "-m", "course_lib.grading", "grade", str(submissions), "--out", str(tmp_path / "s.csv")]
    env = {**os.environ, "PATH": str(tmp_path)}  # no bwrap on this PATH
    refused = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert refused.returncode == 2 and not (tmp_path / "s.csv").exists()
    assert "apt-get install bubblewrap" in refused.stderr and "--no-sandbox" in refused.stderr
    assert "user namespaces" in refused.stderr
    graded = subprocess.run(command + ["--no-sandbox"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert graded.returncode == 0, graded.stderr
    assert "WARNING: graded without the sandbox" in (tmp_path / "s_feedback" / "correct.txt").read_text()
    assert "5 / 5 points" in (tmp_path / "s_feedback" / "correct.txt").read_text()


@needs_sandbox
@pytest.mark.parametrize("base", ["/tmp", "~", "/opt"])
def test_a_clone_installed_non_editable_grades_in_the_sandbox(base):
    """The course as CI and quick tries have it: a clone under /tmp (or $HOME, /opt), installed (not
    editable) into a virtualenv there. The sandbox's tmpfs at /tmp once hid such a virtualenv (bwrap:
    execvp ...: No such file or directory). A correct submission gets full marks, a hostile one is
    contained."""
    base = os.path.expanduser(base)
    if not os.access(base, os.W_OK):
        pytest.skip(f"{base} is not writable by this user")
    scratch = Path(tempfile.mkdtemp(prefix="course-clone-", dir=base))
    try:
        clone, venv, submissions, out = (scratch / n for n in ("course", "venv", "submissions", "out"))
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
        subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(clone)], check=True)
        subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", head.stdout.strip()], check=True)
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        python = venv / "bin" / "python"
        # The dependencies (nbformat, kafka-python ...) are borrowed from this test's virtualenv
        # rather than downloaded: a .pth line that is a path appends it to sys.path, after the new
        # virtualenv's own site-packages, so the installed course_lib comes first. The .pth files
        # in the borrowed folder are not run (site runs those of site folders only), so its editable
        # finder, which would map course_lib to the checkout, stays out.
        site_packages = subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        Path(site_packages, "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
        # Built in pip's isolated environment: the project needs setuptools >= 68 (its PEP 639
        # license), newer than the one a virtualenv may carry; pip's cache makes it quick.
        subprocess.run(
            [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", str(clone)],
            check=True,
            timeout=300,
        )
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["HOME"] = str(scratch)
        where = subprocess.run(
            [str(python), "-c", "import course_lib; print(course_lib.__file__)"],
            capture_output=True,
            text=True,
            env=env,
            cwd=scratch,
            check=True,
        ).stdout.strip()
        assert where.startswith(site_packages), f"course_lib imported from {where}, not the installed copy"
        installed = Path(where).parent
        submissions.mkdir()
        out.mkdir()
        correct_submission("05", submissions / "correct.ipynb", root=clone)
        targets = [installed / "grading" / "pwned.py", clone / "pwned.txt", venv / "bin" / "pwned", submissions / "x"]
        notebook(submissions / "hostile.ipynb", attempts(targets), "contained", in_function=attempts(targets))
        result = subprocess.run(
            [str(python), "-m", "course_lib.grading", "grade", str(submissions), "--out", str(out / "scores.csv")],
            capture_output=True,
            text=True,
            cwd=scratch,
            env=env,
            timeout=240,
        )
        assert result.returncode == 0, result.stderr
        got = {r["learner"]: float(r["total"]) for r in csv.DictReader((out / "scores.csv").open())}
        feedback = {p.stem: p.read_text() for p in (out / "scores_feedback").glob("*.txt")}
        assert got == {"correct": 5, "hostile": 3}, feedback
        assert "WARNING" not in feedback["correct"]
        for path in targets:
            assert not path.exists(), f"a submission wrote {path}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@needs_sandbox
def test_the_dead_letter_exercise_is_graded_in_the_sandbox(tmp_path):
    """Lesson 05c's dead-letter question (ex05c_q5, Kafka 4.4's KIP-1191) as an instructor grades
    it: the 05c set's correct submission gets its points in the sandbox, and the same submission
    with the number the lesson prints for its own run (the copied answer) gets none for it."""
    submissions, out = tmp_path / "submissions", tmp_path / "out"
    submissions.mkdir()
    out.mkdir()
    correct = correct_submission("05c", submissions / "correct.ipynb")
    copied = nbformat.read(correct, as_version=4)
    answers = [c for c in copied.cells if c.source.strip().startswith("ex05c_q5 =")]
    assert len(answers) == 1, "the 05c solution answers ex05c_q5 in one cell"
    answers[0].source = "ex05c_q5 = 2"
    nbformat.write(copied, submissions / "copied.ipynb")
    result = subprocess.run(
        [sys.executable, "-m", "course_lib.grading", "grade", str(submissions), "--out", str(out / "scores.csv")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    rows = {r["learner"]: r for r in csv.DictReader((out / "scores.csv").open())}
    feedback = {p.stem: p.read_text() for p in (out / "scores_feedback").glob("*.txt")}
    assert float(rows["correct"]["ex05c_q5"]) > 0, feedback["correct"]
    assert float(rows["copied"]["ex05c_q5"]) == 0, feedback["copied"]
    assert float(rows["correct"]["total"]) == float(rows["correct"]["max"]), feedback["correct"]
    assert "WARNING" not in feedback["correct"]
