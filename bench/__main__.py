"""``python -m bench [sim|grading] [--quick]``: print benchmark tables.

Real-Kafka and Spark benchmarks need a JVM and are separate commands (see README).
"""
import sys


def main(argv: list[str]) -> None:
    quick = "--quick" in argv
    if "grading" in argv:
        from . import grading
        grading.main()
        return
    from . import sim_throughput
    sim_throughput.main(quick=quick)


if __name__ == "__main__":
    main(sys.argv[1:])
