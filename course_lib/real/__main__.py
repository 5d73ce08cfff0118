"""``python -m course_lib.real fetch [--spark [VERSION]]``: download the lab's jars once.

Taught in notebooks/09_real_kafka_lab.
"""

import argparse
import sys

from course_lib.real.jars import main_fetch


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m course_lib.real", description="Real Apache Kafka lab helpers.")
    sub = p.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch", help="download the Kafka broker jars (and Spark's Kafka connector)")
    f.add_argument(
        "--spark",
        nargs="?",
        const="",
        default=None,
        metavar="VERSION",
        help="also fetch spark-sql-kafka-0-10 (default: the installed pyspark's version)",
    )
    args = p.parse_args(argv)
    if args.cmd == "fetch":
        return main_fetch(spark=args.spark is not None, spark_version=args.spark or None)
    return 2


if __name__ == "__main__":
    sys.exit(main())
