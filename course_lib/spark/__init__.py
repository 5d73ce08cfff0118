"""PySpark Structured Streaming on real Kafka: the exactly-once lab.

- :mod:`course_lib.spark.session` - a SparkSession with Spark's Kafka connector (Maven cache);
- :mod:`course_lib.spark.orders` - the orders data set and its validation rules in plain Python;
- :mod:`course_lib.spark.loader` - produce the orders transactionally, skipping what is there;
- :mod:`course_lib.spark.pipeline` - validate, enrich, and write to three sinks;
- :mod:`course_lib.spark.job` - the streaming job as its own (killable) process;
- :mod:`course_lib.spark.harness` - kill/restart the job and a broker, final reads, history;
- :mod:`course_lib.spark.experiment_options` - the knobs of one experiment;
- :mod:`course_lib.spark.job_process` - one run of the job, started and SIGKILLed as a process group;
- :mod:`course_lib.spark.faults` - what the harness injects: commit traps, random and broker kills;
- :mod:`course_lib.spark.outcome` - read each sink back; lost and duplicated ids;
- :mod:`course_lib.spark.remote` - the lab against a Spark Connect server (``SPARK_REMOTE``):
  per-learner directory, Kafka credentials, a URL that does not answer;
- :mod:`course_lib.spark.connect_server` - start that server from the installed pyspark.

Taught in notebooks/10_pyspark_exactly_once_lab.
"""
