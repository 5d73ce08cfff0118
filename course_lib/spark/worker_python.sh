#!/bin/sh
# The Python that a Spark Connect server started by course_lib.spark.connect_server runs its
# Python workers with (foreachBatch functions): $COURSE_SPARK_WORKER_PYTHON, with Spark's own
# copy of pyspark (python/lib/pyspark.zip, which Spark puts first on PYTHONPATH) taken off the
# path. Its modules are compiled on every import (a zip holds no .pyc), which doubles a worker's
# start-up; Spark 4.0 gives a worker 10 s to connect back, which a busy server then misses. The
# installed pyspark is the same version (SPARK_HOME is the installed pyspark), with cached .pyc.
PYTHONPATH=$(printf '%s' "$PYTHONPATH" | tr ':' '\n' | grep -v '/python/lib/pyspark\.zip$' | paste -sd: -)
export PYTHONPATH
exec "${COURSE_SPARK_WORKER_PYTHON:?set by course_lib.spark.connect_server}" "$@"
