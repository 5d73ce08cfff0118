"""The Java Kafka client (kafka-clients of the lab's Kafka release, ``$COURSE_KAFKA_VERSION``) from Python, through a small driver process.

As Jepsen drives clients written in other languages, one JVM runs ``Driver.java`` (our own code,
compiled at first use against the cached Kafka jars: :mod:`.build`) and answers JSON lines on
stdin/stdout (:mod:`.process`); :mod:`.clients` wraps its producer, consumer and admin calls in
Python objects named after Java's methods. So the course can put the Java client on the same
cluster and the same faults as kafka-python, and compare what each reports, error class for
error class.

    from course_lib.java_client import DriverProcess, JavaProducer
    with DriverProcess() as driver:                 # needs a JDK 17+ and Maven (jars.INSTALL_HINT)
        p = JavaProducer(driver, {"bootstrap.servers": servers, "enable.idempotence": "true"})
        p.send("orders", b"paid").get(timeout=30)   # RecordMetadata(topic, partition, offset, ...)
        p.close(timeout=5)
"""

from .build import BuildFailed, DriverBuild, driver_build
from .clients import (
    ConsumerRecord,
    JavaAdmin,
    JavaConsumer,
    JavaFuture,
    JavaProducer,
    JavaShareConsumer,
    ShareRecord,
    OffsetAndMetadata,
    RecordMetadata,
    TopicPartition,
    outcomes,
)
from .process import DriverDied, DriverError, DriverProcess, DriverTimeout, JavaException

__all__ = [
    "BuildFailed",
    "ConsumerRecord",
    "DriverBuild",
    "DriverDied",
    "DriverError",
    "DriverProcess",
    "DriverTimeout",
    "JavaAdmin",
    "JavaConsumer",
    "JavaException",
    "JavaFuture",
    "JavaProducer",
    "JavaShareConsumer",
    "OffsetAndMetadata",
    "RecordMetadata",
    "ShareRecord",
    "TopicPartition",
    "driver_build",
    "outcomes",
]
