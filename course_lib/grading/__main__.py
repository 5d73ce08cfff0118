"""python -m course_lib.grading {grade,generate} - see course_lib/grading/README.md."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_lib.grading")
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade a folder of submitted notebooks into a CSV + feedback files")
    g.add_argument("submissions", type=Path)
    g.add_argument("--out", type=Path, default=Path("scores.csv"))
    g.add_argument("--feedback-dir", type=Path, default=None, help="default: <out>_feedback/ next to the CSV")
    g.add_argument("--timeout", type=float, default=300, help="seconds per submitted notebook")
    g.add_argument("--cell-timeout", type=float, default=60, help="seconds per cell")
    g.add_argument(
        "--implementation-timeout", type=float, default=120, help="seconds per implemented exercise's hidden check"
    )
    g.add_argument(
        "--sets", default=None, help="exercise sets to grade, e.g. 05 or 02,05 (default: those the submissions mention)"
    )
    g.add_argument("--jobs", type=int, default=2, help="submissions graded at the same time")
    g.add_argument("--memory-mb", type=int, default=2048, help="address space per learner process")
    g.add_argument("--processes", type=int, default=64, help="processes and threads per sandbox")
    g.add_argument(
        "--secret-file",
        type=Path,
        default=None,
        help="file holding the secret the hidden seeds are derived from (default: $COURSE_GRADING_SECRET, "
        "else a public default that is only good for trying the grader out)",
    )
    g.add_argument(
        "--no-sandbox",
        action="store_true",
        help="grade without the bubblewrap sandbox: learner code runs as you (every feedback file says so)",
    )
    sub.add_parser("generate", help="regenerate exercises/ and solutions/ from exercises_src/")
    args = parser.parse_args(argv)
    if args.command == "generate":
        from .generate import generate

        for path in generate():
            print(path)
        return 0
    from .autograder import Grader, Limits, grade_folder
    from .hidden import SECRET_ENV, grading_secret
    from .sandbox import SandboxUnavailable

    limits = Limits(
        submission_s=args.timeout,
        cell_s=args.cell_timeout,
        implementation_s=args.implementation_timeout,
        memory_mb=args.memory_mb,
        processes=args.processes,
    )
    if not args.submissions.is_dir():
        parser.error(f"{args.submissions} is not a folder: pass the folder that holds the submitted notebooks")
    if args.secret_file:
        try:
            secret = args.secret_file.read_text().strip()
        except OSError as exc:
            parser.error(f"cannot read the secret file: {exc}")
        if not secret:
            parser.error(f"{args.secret_file} is empty: put a long random string in it")
    else:
        secret, is_default = grading_secret()
        if is_default:
            print(
                f"note: hidden seeds derived from the public default secret - fine for trying the grader, not for "
                f"grading: set {SECRET_ENV} or pass --secret-file",
                file=sys.stderr,
            )
    if args.no_sandbox:
        print("WARNING: --no-sandbox: learner code runs as you, with your files and network", file=sys.stderr)
    sets = args.sets.split(",") if args.sets else None
    try:
        grade_folder(
            args.submissions, args.out, args.feedback_dir, Grader(limits, not args.no_sandbox, secret), sets, args.jobs
        )
    except SandboxUnavailable as exc:
        print(f"not grading: {exc}", file=sys.stderr)
        return 2
    print(f"scores written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
