"""The client libraries' own clients, unrecorded: a producer and a consumer with the library's
whole public API and its own configuration names, as an application written against that
library builds them.

A differential needs them (:mod:`course_lib.experiments.differential` compares every public call
of the simulator's clients with kafka-python's, :mod:`course_lib.experiments.java_differential`
the simulator's transactional producer with Java's, :mod:`course_lib.experiments.consumer_protocol_differential`
produces with them): none of them wants a history, nor the one API the recorded clients of
:class:`~course_lib.client_adapters.ClientSide` translate every library to.

- ``bootstrap``: the cluster's address; the simulator's clients take the simulated ``Cluster``
  itself (they live in its process, on its clock);
- ``config``: the library's own names - kafka-python's for the simulator's clients (they mirror
  kafka-python) and kafka-python's, Java's for the Java client and librdkafka's (the same) for
  confluent-kafka;
- ``driver``: the Java client's clients live in a driver process
  (:class:`~course_lib.java_client.DriverProcess`; the adapter's shared one is
  :func:`course_lib.client_adapters.for_java.driver`).
"""

from __future__ import annotations

from typing import Any


def _simulated_producer(bootstrap: Any, config: dict, driver: Any) -> Any:
    from ..clients import KafkaProducer

    return KafkaProducer(bootstrap_servers=bootstrap, **config)


def _simulated_consumer(bootstrap: Any, config: dict, topics: tuple[str, ...], driver: Any) -> Any:
    from ..clients import KafkaConsumer

    return KafkaConsumer(*topics, bootstrap_servers=bootstrap, **config)


def _kafka_python_producer(bootstrap: Any, config: dict, driver: Any) -> Any:
    from kafka import KafkaProducer

    return KafkaProducer(bootstrap_servers=bootstrap, **config)


def _kafka_python_consumer(bootstrap: Any, config: dict, topics: tuple[str, ...], driver: Any) -> Any:
    from kafka import KafkaConsumer

    return KafkaConsumer(*topics, bootstrap_servers=bootstrap, **config)


def _rdkafka_producer(bootstrap: Any, config: dict, driver: Any) -> Any:
    from confluent_kafka import Producer

    return Producer({"bootstrap.servers": bootstrap, **config})


def _rdkafka_consumer(bootstrap: Any, config: dict, topics: tuple[str, ...], driver: Any) -> Any:
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": bootstrap, **config})
    if topics:
        consumer.subscribe(list(topics))
    return consumer


def _java_producer(bootstrap: Any, config: dict, driver: Any) -> Any:
    from ..java_client import JavaProducer

    return JavaProducer(_driver(driver), {"bootstrap.servers": bootstrap, **config})


def _java_consumer(bootstrap: Any, config: dict, topics: tuple[str, ...], driver: Any) -> Any:
    from ..java_client import JavaConsumer

    consumer = JavaConsumer(_driver(driver), {"bootstrap.servers": bootstrap, **config})
    if topics:
        consumer.subscribe(list(topics))
    return consumer


def _driver(driver: Any) -> Any:
    if driver is None:
        raise ValueError(
            "the Java client's clients live in a driver process: pass driver= (the adapter's shared one is "
            "course_lib.client_adapters.for_java.driver())"
        )
    return driver


#: each client library's own producer, by client: (bootstrap, config, driver) -> the producer
LIBRARY_PRODUCERS = {
    "simulator": _simulated_producer,
    "kafka-python": _kafka_python_producer,
    "confluent-kafka": _rdkafka_producer,
    "java": _java_producer,
}
#: each client library's own consumer, by client: (bootstrap, config, topics, driver) -> the
#: consumer, subscribed to ``topics`` when there are any
LIBRARY_CONSUMERS = {
    "simulator": _simulated_consumer,
    "kafka-python": _kafka_python_consumer,
    "confluent-kafka": _rdkafka_consumer,
    "java": _java_consumer,
}


def library_producer(client: str, bootstrap: Any, config: dict, driver: Any = None) -> Any:
    """``client``'s own producer (a key of :data:`LIBRARY_PRODUCERS`) with ``config`` in its own
    names, unrecorded (module docstring).

    >>> library_producer("aiokafka", "localhost:9092", {})
    Traceback (most recent call last):
    ValueError: no library producer for 'aiokafka': choose one of simulator, kafka-python, confluent-kafka, java
    >>> library_producer("java", "localhost:9092", {})
    Traceback (most recent call last):
    ValueError: the Java client's clients live in a driver process: pass driver= (the adapter's shared one is course_lib.client_adapters.for_java.driver())
    """
    if client not in LIBRARY_PRODUCERS:
        raise ValueError(f"no library producer for {client!r}: choose one of {', '.join(LIBRARY_PRODUCERS)}")
    return LIBRARY_PRODUCERS[client](bootstrap, config, driver)


def library_consumer(
    client: str, bootstrap: Any, config: dict, topics: tuple[str, ...] = (), driver: Any = None
) -> Any:
    """``client``'s own consumer (a key of :data:`LIBRARY_CONSUMERS`) with ``config`` in its own
    names, subscribed to ``topics`` if any, unrecorded (module docstring).

    >>> library_consumer("aiokafka", "localhost:9092", {})
    Traceback (most recent call last):
    ValueError: no library consumer for 'aiokafka': choose one of simulator, kafka-python, confluent-kafka, java
    """
    if client not in LIBRARY_CONSUMERS:
        raise ValueError(f"no library consumer for {client!r}: choose one of {', '.join(LIBRARY_CONSUMERS)}")
    return LIBRARY_CONSUMERS[client](bootstrap, config, tuple(topics), driver)
