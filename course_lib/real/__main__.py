"""``python -m course_lib.real fetch [--kafka-version V] [--spark [VERSION]]``: download the lab's
jars once (the Kafka version: ``$COURSE_KAFKA_VERSION``, else the course's default).

Taught in notebooks/09_real_kafka_lab.
"""

import argparse
import sys

from course_lib.clusters.jars import SUPPORTED_KAFKA_VERSIONS, main_fetch


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
    f.add_argument(
        "--kafka-version",
        choices=SUPPORTED_KAFKA_VERSIONS,
        help="which Kafka release (default: $COURSE_KAFKA_VERSION, else the course's default)",
    )
    args = p.parse_args(argv)
    if args.cmd == "fetch":
        return main_fetch(spark=args.spark is not None, spark_version=args.spark or None, version=args.kafka_version)
    return 2


if __name__ == "__main__":
    sys.exit(main())
