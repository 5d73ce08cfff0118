"""What the Spark lab needs installed, checked without starting Spark: Java, pyspark, the Spark
Connect client; :class:`SparkUnavailable` says which one is missing and how to get it.

Shared by :mod:`course_lib.spark.session` (local sessions) and :mod:`course_lib.spark.remote`
(Spark Connect sessions), which is why it is a module of its own: session builds on remote, and
both build on this.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

#: Fully qualified name of the connector's data source: present iff the jars were loaded.
KAFKA_PROVIDER_CLASS = "org.apache.spark.sql.kafka010.KafkaSourceProvider"


class SparkUnavailable(RuntimeError):
    """Spark cannot run here (no Java, no pyspark, or no Kafka connector). The message says why."""


def check_java() -> str:
    """Return the path of ``java`` or raise :class:`SparkUnavailable` saying how to get one."""
    java_home = os.environ.get("JAVA_HOME")
    java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if not java or not Path(java).exists():
        raise SparkUnavailable(
            (
                f"Java was not found (JAVA_HOME={java_home} has no bin/java). "
                if java_home
                else "Java was not found (no JAVA_HOME and no `java` on PATH). "
            )
            + "PySpark 4 needs Java 17 or "
            "21: install it (Debian: `apt-get install openjdk-17-jdk-headless`; conda: the "
            "course's environment.yml) and restart the kernel."
        )
    return java


def check_pyspark() -> str:
    """Return the installed pyspark version or raise :class:`SparkUnavailable`."""
    try:
        import pyspark
    except ImportError as exc:
        raise SparkUnavailable(
            "pyspark is not installed. Install the course's Spark extra: "
            "`pip install -e '.[spark]'`, then restart the kernel."
        ) from exc
    return pyspark.__version__


def check_connect_client() -> None:
    """Raise :class:`SparkUnavailable` unless pyspark's Spark Connect client can be imported."""
    try:
        import pyspark.sql.connect.session  # noqa: F401  (checks grpcio, pandas, pyarrow too)
    except ImportError as exc:
        raise SparkUnavailable(
            f"the Spark Connect client is not installed ({exc}). Install the course's Spark extra: "
            "`pip install -e '.[spark]'` (pyspark with grpcio, pandas, pyarrow), then restart the kernel."
        ) from exc


def import_root() -> Path:
    """The folder this ``course_lib`` is imported from (a checkout, or site-packages): the working
    directory of the Python processes the lab starts, so that ``python -m course_lib...`` there
    imports this same course_lib, installed or not."""
    import course_lib

    return Path(course_lib.__file__).resolve().parents[1]
