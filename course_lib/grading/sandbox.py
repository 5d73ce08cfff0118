"""Where learner code runs when the instructor grades: an OS sandbox made with bubblewrap
(``bwrap``), and a runner that never blocks on what runs inside it.

The sandbox has its own mount, PID, network, IPC and UTS namespaces. It sees, read-only, only
``/usr`` (and the ``/bin``, ``/lib*`` links), the Python installation, virtualenv and package
folders, and the ``course_lib`` package; its one writable place is a private, size-limited tmpfs
at ``/tmp`` (also ``$HOME``), mounted before the read-only binds so that it hides none of them (a
course checked out under ``/tmp``). The instructor's secret, the other submissions, the output
folder and the rest of the repository are not mounted. Its network namespace has only its own
loopback: nothing on the machine or beyond is reachable. Inside, :func:`confine` (the first thing
the sandboxed entry points run) sets CPU, memory, file-size and process-count limits and, when the
grader runs as root, switches to an unprivileged uid (the kernel does not apply the process-count
limit to root).
When the sandbox's first process ends or the grader kills the sandbox, the PID namespace goes
and with it every process started inside, detached ones included (``--die-with-parent``).

:func:`run` gives the process files, not pipes, for its output (so a child that keeps a pipe open
cannot make the grader wait) and waits with a deadline; it reads back at most a tail of the output.

Without bubblewrap (``--no-sandbox``) the same limits are set except the process count, and the
process runs in its own session, killed as a group on timeout; a detached child then survives.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import course_lib

LIMITS_ENV = "COURSE_GRADING_LIMITS"
SANDBOX_TMP = "/tmp"
NOTEBOOK_IN_SANDBOX = "/sandbox/submission.ipynb"
COURSE_PACKAGE = Path(course_lib.__file__).resolve().parent
_uids = itertools.count()
UID_BASE, UID_RANGE = 200_000, 100_000  # the uids sandboxes run as when the grader is root


class SandboxUnavailable(RuntimeError):
    pass


@dataclass(frozen=True)
class Confinement:
    """What one sandboxed process (and its children) may use."""

    cpu_s: int = 600  # CPU seconds per process (the wall-clock timeout usually comes first)
    memory_mb: int = 2048  # address space per process
    processes: int = 64  # processes and threads in the sandbox
    output_mb: int = 16  # largest file it can write: its stdout, stderr, answers, anything in /tmp
    tmp_mb: int = 64  # the whole writable tmpfs


@dataclass
class Outcome:
    returncode: int | None
    stdout: str  # the last ``tail_bytes`` of each
    stderr: str
    channel: bytes  # what the process wrote to its result file (fd 3), at most ``output_mb``
    timed_out: bool
    output_exceeded: bool


def confine() -> None:
    """Called first by the sandboxed entry points (submission.py, evaluate.py): apply the limits
    the grader passed in ``COURSE_GRADING_LIMITS`` before any learner code runs. Learner code
    cannot raise them afterwards (raising a hard limit needs CAP_SYS_RESOURCE, which it lacks)."""
    spec = os.environ.pop(LIMITS_ENV, None)
    if not spec:
        return
    import resource

    spec = json.loads(spec)
    uid = spec.get("uid")
    if uid is not None and os.getuid() == 0:  # bwrap granted CAP_SETUID/CAP_SETGID for this only
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)  # leaving uid 0 clears every capability
    mb = 2**20
    limits = {
        resource.RLIMIT_AS: spec["memory_mb"] * mb,
        resource.RLIMIT_CPU: spec["cpu_s"],
        resource.RLIMIT_FSIZE: spec["output_mb"] * mb,
        resource.RLIMIT_CORE: 0,
    }
    if spec.get("processes"):
        limits[resource.RLIMIT_NPROC] = spec["processes"]
    for kind, value in limits.items():
        resource.setrlimit(kind, (value, value))
    # Past the file-size limit a write fails (an exception in the cell) instead of killing the process.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def _root_links() -> list[str]:
    """/bin, /lib, /lib64, /sbin as on this machine: symlinks into /usr (merged /usr) or directories."""
    args = []
    for name in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
    return args


# Read-only, and nothing secret: the links that make /usr/bin/java work, and Java's own configuration
# (for the opt-in real-Spark check of exercise 10).
ETC_SHARED = ("/etc/alternatives", "/etc/java-17-openjdk", "/etc/java-21-openjdk")


def _pth_dirs(site_dir: str) -> set[str]:
    """The folders the ``.pth`` files in ``site_dir`` add to ``sys.path`` (their lines that are
    paths; ``import`` lines run code and add nothing here), as ``site`` reads them."""
    found = set()
    for pth in Path(site_dir).glob("*.pth"):
        try:
            lines = pth.read_text(errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            line = line.strip()
            if line and not line.startswith(("#", "import ", "import\t")):
                path = Path(site_dir, line)
                if path.is_dir():
                    found.add(str(path.resolve()))
    return found


def python_dirs() -> list[str]:
    """The directories the sandbox's Python needs: the installation, the virtualenv, wherever the
    interpreter binary really lives, and the package folders that ``.pth`` files in the site
    folders add (a virtualenv that borrows another's packages). Not ``sys.path`` as such: it holds
    the grader's working folder (the submissions, the secret) and, in a checkout, the tests."""
    import site

    dirs = {sys.base_prefix, sys.prefix, str(Path(sys.executable).resolve().parent.parent)}
    for site_dir in site.getsitepackages():
        dirs |= _pth_dirs(site_dir)
    dirs.discard(str(COURSE_PACKAGE.parent))  # a checkout's root (an editable install): the package alone is bound
    dirs = {d for d in dirs if not d.startswith("/usr/") and d != "/usr"}
    # what lies inside another bound folder comes with it
    return sorted(d for d in dirs if not any(d.startswith(other + "/") for other in dirs))


HOSTNAME = "sandbox"
HOSTS = f"127.0.0.1 localhost {HOSTNAME}\n::1 localhost\n"


def bwrap_command(
    argv: list[str], confinement: Confinement, notebook_fd: int | None = None, etc: Path | None = None
) -> list[str]:
    """The bwrap command line; ``etc``: a folder holding the sandbox's own ``hosts`` and ``passwd``."""
    cmd = [
        # the bwrap on the grader's PATH (the one probe() found), not one found on the sandbox's PATH
        shutil.which("bwrap") or "bwrap",
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        HOSTNAME,
    ]
    if os.geteuid() == 0:
        # Root: no user namespace, so the sandbox can switch to an unprivileged uid (confine()).
        cmd += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        cmd += ["--unshare-user", "--disable-userns"]
    cmd += ["--ro-bind", "/usr", "/usr"] + _root_links()
    # The learner's scratch first: a tmpfs mounted after the binds would hide every bind beneath it
    # (a course or virtualenv under /tmp, as in a CI checkout). Mounted first, the read-only binds
    # below go on top of it; their parent folders are created in this sandbox's own tmpfs.
    cmd += [
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--perms",
        "1777",
        "--size",
        str(confinement.tmp_mb * 2**20),
        "--tmpfs",
        SANDBOX_TMP,
    ]
    binds = python_dirs() + [str(COURSE_PACKAGE)]
    shared = [d for d in ETC_SHARED if os.path.isdir(d)]
    # bwrap would create the mount points' parents (/root, /work, /etc ...) as 0700, which the
    # unprivileged uid could not traverse: create them 0755 first.
    parents = sorted(
        {str(p) for d in binds + shared for p in Path(d).parents if str(p) not in ("/", SANDBOX_TMP)}, key=len
    )
    for parent in parents:
        cmd += ["--perms", "0755", "--dir", parent]
    # sorted: a folder before anything bound inside it, which would otherwise be hidden by it
    for d in sorted(set(binds + shared)):
        cmd += ["--ro-bind", d, d]
    if etc is not None:
        cmd += ["--perms", "0755", "--dir", "/etc"]
        for name in ("hosts", "passwd"):
            cmd += ["--ro-bind", str(etc / name), f"/etc/{name}"]
    if notebook_fd is not None:
        cmd += ["--perms", "0444", "--ro-bind-data", str(notebook_fd), NOTEBOOK_IN_SANDBOX]
    cmd += ["--remount-ro", "/", "--chdir", SANDBOX_TMP, "--"]
    return cmd + argv


@contextlib.contextmanager
def _sandbox_uid() -> Iterator[int]:
    """The uid learner code runs as, held while the sandbox runs: as root, one no other sandbox on
    this machine runs as, so RLIMIT_NPROC counts only this sandbox's processes (the kernel does not
    apply it to root); otherwise the user's own (in a user namespace of its own, where the count
    starts from zero).

    A uid is claimed by binding an abstract socket named after it, which the kernel releases when
    the grader closes it or dies: two graders (two xdist workers, two suites, two instructors) once
    drew the same uid from their own counters, and a learner's processes in one sandbox made
    fork() fail with EAGAIN in the other."""
    if os.geteuid() != 0:
        yield os.getuid()
        return
    for _ in range(UID_RANGE):
        uid = UID_BASE + next(_uids) % UID_RANGE
        claim = socket.socket(socket.AF_UNIX)
        try:
            claim.bind(f"\0course-grading-uid-{uid}")
        except OSError:  # another sandbox runs as this uid
            claim.close()
            continue
        with claim:
            yield uid
        return
    raise SandboxUnavailable(f"all {UID_RANGE} sandbox uids from {UID_BASE} are in use; wait for a grader to finish")


def _environment(sandboxed: bool, confinement: Confinement, home: str, uid: int | None) -> dict:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        # the course package comes from here, before any editable install in the virtualenv
        "PYTHONPATH": str(COURSE_PACKAGE.parent),
    }
    # (no COURSE_KAFKA_BOOTSTRAP: exercise 09's real-Kafka part runs in the grader, the sandbox has no network)
    for keep in ("COURSE_GRADE_SPARK", "JAVA_HOME", "SPARK_LOCAL_IP", "PYSPARK_PYTHON"):
        if keep in os.environ:
            env[keep] = os.environ[keep]
    limits = {"cpu_s": confinement.cpu_s, "memory_mb": confinement.memory_mb, "output_mb": confinement.output_mb}
    if sandboxed:
        limits["processes"] = confinement.processes
        if os.geteuid() == 0:
            limits["uid"] = uid
    env[LIMITS_ENV] = json.dumps(limits)
    return env


def _tail(path: Path, tail_bytes: int) -> str:
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        f.seek(max(0, f.tell() - tail_bytes))
        return f.read().decode("utf-8", "replace")


def run(
    argv: list[str],
    *,
    sandboxed: bool,
    timeout_s: float,
    confinement: Confinement = Confinement(),
    stdin: bytes = b"",
    notebook: Path | None = None,
    tail_bytes: int = 65536,
) -> Outcome:
    """Run ``argv`` (a Python entry point that calls :func:`confine`) sandboxed or not, with
    ``stdin`` as its input and ``notebook`` at :data:`NOTEBOOK_IN_SANDBOX` (sandboxed) or as a
    private copy (not), and wait at most ``timeout_s``. The process writes its result to the file
    descriptor named in ``$COURSE_GRADING_CHANNEL_FD``."""
    with (
        tempfile.TemporaryDirectory(prefix="grading-run-") as scratch_dir,
        _sandbox_uid() if sandboxed else contextlib.nullcontext(None) as uid,
    ):
        scratch = Path(scratch_dir)
        files = {name: open(scratch / name, "w+b") for name in ("stdin", "stdout", "stderr", "channel")}
        try:
            files["stdin"].write(stdin)
            files["stdin"].seek(0)
            # pass_fds keeps the descriptor's number in the child (and bwrap passes it on): say which it is
            channel_fd = files["channel"].fileno()
            pass_fds, notebook_file = [channel_fd], None
            if sandboxed:
                if notebook is not None:
                    notebook_file = open(notebook, "rb")
                    pass_fds.append(notebook_file.fileno())
                etc = scratch / "etc"
                etc.mkdir()
                (etc / "hosts").write_text(HOSTS)  # its own name resolves to its own loopback (Spark needs it)
                (etc / "passwd").write_text(
                    f"learner:x:{uid}:{uid}:learner:{SANDBOX_TMP}:/bin/false\n"
                )  # Java: user.home
                cmd = bwrap_command(argv, confinement, notebook_file.fileno() if notebook_file else None, etc)
                home = SANDBOX_TMP
            else:
                home = str(scratch / "home")
                os.mkdir(home)
                if notebook is not None:
                    shutil.copy(notebook, Path(home) / "submission.ipynb")
                cmd = argv
            env = _environment(sandboxed, confinement, home, uid)
            env["COURSE_GRADING_CHANNEL_FD"] = str(channel_fd)
            if notebook is not None:
                env["COURSE_GRADING_NOTEBOOK"] = (
                    NOTEBOOK_IN_SANDBOX if sandboxed else str(Path(home) / "submission.ipynb")
                )
            proc = subprocess.Popen(
                cmd,
                cwd=home if not sandboxed else None,
                env=env,
                stdin=files["stdin"],
                stdout=files["stdout"],
                stderr=files["stderr"],
                pass_fds=pass_fds,
                start_new_session=True,
            )
            if notebook_file:
                notebook_file.close()
            timed_out = False
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill(proc)
            if not sandboxed:
                _kill_group(proc.pid)  # what the process left behind in its session
        finally:
            for f in files.values():
                f.close()
        cap = confinement.output_mb * 2**20
        exceeded = any((scratch / n).stat().st_size >= cap for n in ("stdout", "stderr", "channel"))
        with open(scratch / "channel", "rb") as f:
            channel = f.read(cap)
        return Outcome(
            proc.returncode,
            _tail(scratch / "stdout", tail_bytes),
            _tail(scratch / "stderr", tail_bytes),
            channel,
            timed_out,
            exceeded,
        )


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _kill(proc: subprocess.Popen) -> None:
    """Sandboxed: killing bwrap kills the sandbox's init (--die-with-parent) and so its whole PID
    namespace. Not sandboxed: the process group, as far as it reaches."""
    _kill_group(proc.pid)
    proc.kill()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:  # in uninterruptible sleep; the kernel reaps it later
        pass


USERNS_HINT = (
    "as a user other than root bubblewrap needs unprivileged user namespaces "
    "(sysctl kernel.unprivileged_userns_clone=1 on Debian kernels that have it, "
    "user.max_user_namespaces > 0, and on Ubuntu >= 23.10 "
    "kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap)"
)
NO_SANDBOX_HINT = (
    "or grade without the sandbox with --no-sandbox (learner code then runs as you, with your files and network)"
)


def diagnose(stderr: str, argv0: str) -> str:
    """Why a sandboxed probe failed, from its stderr: bwrap's own error when bwrap failed (with the
    machine setting behind it when that is the cause), else the last lines of what Python said."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    own = [line for line in lines if line.startswith("bwrap:")]
    if own:
        error = own[-1]
        if "execvp" in error:
            return (
                f"bubblewrap started but could not execute {argv0} inside the sandbox ({error}); the sandbox "
                f"binds {', '.join(python_dirs() + [str(COURSE_PACKAGE)])} read-only: this is a bug in the "
                "sandbox's mounts, please report it"
            )
        if any(word in error.lower() for word in ("namespace", "uid map", "operation not permitted", "permission")):
            return f"bubblewrap could not set up the sandbox ({error}); {USERNS_HINT}"
        return f"bubblewrap could not set up the sandbox ({error})"
    if not lines:
        return "the sandboxed Python printed nothing and exited"
    return "the sandboxed Python failed: " + " | ".join(lines[-3:])


HOW_TO_GET = (
    "install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`; Fedora: `dnf install bubblewrap`); "
    f"{USERNS_HINT}; {NO_SANDBOX_HINT}"
)


def probe(timeout_s: float = 60) -> str | None:
    """None when the sandbox works here (a sandboxed Python imports the course package and applies
    its limits); otherwise why not, and what to do."""
    if shutil.which("bwrap") is None:
        return f"the grading sandbox needs bubblewrap (bwrap), which is not installed: {HOW_TO_GET}."
    check = "from course_lib.grading.sandbox import confine; confine(); print('sandbox-ok')"
    try:
        outcome = run([sys.executable, "-c", check], sandboxed=True, timeout_s=timeout_s)
    except OSError as exc:
        return f"the grading sandbox could not start bwrap ({exc}); {NO_SANDBOX_HINT}."
    if outcome.timed_out:
        return f"the grading sandbox's test run did not finish within {timeout_s:g} s; {NO_SANDBOX_HINT}."
    if "sandbox-ok" not in outcome.stdout:
        return f"the grading sandbox does not work here: {diagnose(outcome.stderr, sys.executable)}; {NO_SANDBOX_HINT}."
    return None
