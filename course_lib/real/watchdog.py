"""Run one JVM so that it cannot outlive the Python process that asked for it.

A Jupyter kernel that is restarted (or killed) runs no ``atexit`` handlers; a broker JVM started
directly from it would keep its ports and eat a core. So every JVM is started by this tiny
watchdog instead: ``python watchdog.py <parent-pid> <log-file> -- java ...``.

- the JVM is started with ``PR_SET_PDEATHSIG=SIGKILL``: the kernel kills it when the watchdog dies
  (the watchdog is single-threaded, so "the thread that forked it exits" means "the watchdog exits");
- the watchdog polls its parent and exits as soon as the parent is gone, taking the JVM with it;
- it prints the JVM's pid on stdout so the cluster can send SIGKILL/SIGSTOP to the JVM itself.

Run as a script (no package import) to keep its start-up at a few tens of milliseconds.
Taught in notebooks/09_real_kafka_lab.
"""

import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def main(argv: list[str]) -> int:
    parent_pid, log_path, sep, *cmd = argv
    assert sep == "--" and cmd, "usage: watchdog.py <parent-pid> <log-file> -- command ..."
    parent_pid = int(parent_pid)
    _die_with_parent()  # the watchdog itself dies if the Python parent dies abruptly
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        return 1
    with open(log_path, "ab", buffering=0) as log:
        child = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent
        )
    print(child.pid, flush=True)
    sys.stdout.close()

    def forward(signum, _frame):  # a SIGTERM to the watchdog means "stop the broker cleanly"
        try:
            os.kill(child.pid, signum)
        except ProcessLookupError:
            pass

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C belongs to the parent's cleanup
    while True:
        rc = child.poll()
        if rc is not None:
            return rc if rc >= 0 else 128 - rc  # killed by a signal: shell-style code
        if os.getppid() != parent_pid:  # parent gone (kernel restart, crash): take the JVM along
            child.kill()
            child.wait()
            return 1
        time.sleep(0.2)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
