"""A job's milestone lines are all read once it has ended, however late the reader is."""

from __future__ import annotations

import sys
import time

from course_lib.spark.job_process import JobProcess

#: prints its trap line and SIGKILLs its own process group, as the job does in the window
TRAPPED_AND_KILLED = (
    "import os, signal\nprint('TRAPPED files 4', flush=True)\nos.killpg(os.getpgid(0), signal.SIGKILL)\n"
)


def test_a_killed_job_s_last_line_is_seen_however_late_the_reader(tmp_path, monkeypatch):
    read = JobProcess._read

    def late_reader(self):
        time.sleep(0.5)  # a loaded machine: the reader thread is scheduled after the job died
        read(self)

    monkeypatch.setattr(JobProcess, "_read", late_reader)
    job = JobProcess(tmp_path / "unused.json", tmp_path / "job.log", argv=[sys.executable, "-c", TRAPPED_AND_KILLED])
    try:
        while job.proc.poll() is None:  # what the harness's run loop does until the job ends
            time.sleep(0.01)
        assert job.proc.returncode == -9
        assert job.line("TRAPPED") == "TRAPPED files 4"
    finally:
        job.close()
