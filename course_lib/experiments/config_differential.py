"""The client differential's configuration part: every producer and consumer setting the course
teaches, with accepted and refused values (and pairs of refused values, for the order of the
checks), given to the simulator's clients and to kafka-python 3.0.12's. Each case's outcome is
"ok" (with the idempotence the producer ended up with) or the exception raised; the simulator
must refuse what kafka-python refuses with an exception an ``except`` clause written for
kafka-python's catches (the same class or a subclass of it), and accept what it accepts.

Where the simulator refuses *more* (a value kafka-python takes at construction and Kafka refuses
later, at each request), the case is listed in :data:`KNOWN_CONFIG_DIFFERENCES` with the reason.
Two values are left out: with ``max_in_flight_requests_per_connection=0`` or
``request_timeout_ms=-1`` kafka-python cannot send a request, so its constructor times out after
``bootstrap_timeout_ms`` (KafkaTimeoutError) and leaves its I/O thread running; the simulator
refuses both with ConfigurationError.

>>> _case_name({"acks": 2, "retries": -1})
'acks=2, retries=-1'
"""

from __future__ import annotations

import warnings

from kafka import KafkaConsumer as RealConsumer
from kafka import KafkaProducer as RealProducer

from ..broker import Cluster
from ..clients import KafkaConsumer as SimConsumer
from ..clients import KafkaProducer as SimProducer

#: Producer settings, one case each (a dict: several settings at once, for the order of checks).
PRODUCER_CASES: tuple[dict, ...] = (
    {},
    {"acks": 0},
    {"acks": 1},
    {"acks": "all"},
    {"acks": -1},
    {"acks": "1"},
    {"acks": 2},
    {"acks": 1, "enable_idempotence": True},
    {"acks": 1, "enable_idempotence": False},
    {"enable_idempotence": False},
    {"retries": 0},
    {"retries": 0, "enable_idempotence": True},
    {"retries": 3},
    {"retries": -1},
    {"max_in_flight_requests_per_connection": 1},
    {"max_in_flight_requests_per_connection": 6},
    {"max_in_flight_requests_per_connection": 6, "enable_idempotence": True},
    {"linger_ms": 5},
    {"linger_ms": -1},
    {"request_timeout_ms": 1000},
    {"delivery_timeout_ms": 3000, "request_timeout_ms": 1000},
    {"delivery_timeout_ms": 1000},
    {"max_block_ms": 1000},
    {"batch_size": 0},
    {"compression_type": "gzip"},
    {"compression_type": "bogus"},
    {"transactional_id": "tx"},
    {"transactional_id": "tx", "enable_idempotence": False},
    {"transactional_id": "tx", "acks": 1},
    {"transactional_id": "tx", "retries": 0, "max_in_flight_requests_per_connection": 6},
    {"ack": 1},
    # order: which refusal comes first when two settings are wrong
    {"ack": 1, "compression_type": "bogus"},
    {"compression_type": "bogus", "acks": 1, "enable_idempotence": True},
    {"compression_type": "bogus", "transactional_id": "tx", "enable_idempotence": False},
)

CONSUMER_CASES: tuple[dict, ...] = (
    {},
    {"group_id": "g"},
    {"auto_offset_reset": "earliest"},
    {"auto_offset_reset": "smallest"},
    {"auto_offset_reset": "none"},
    {"auto_offset_reset": "bogus"},
    {"isolation_level": "read_committed"},
    {"isolation_level": "bogus"},
    {"enable_auto_commit": False},
    {"group_id": "g", "enable_auto_commit": True},
    {"max_poll_records": 10},
    {"max_poll_records": 0},
    {"session_timeout_ms": 6000, "heartbeat_interval_ms": 2000},
    {"session_timeout_ms": 3000, "heartbeat_interval_ms": 3000},
    {"request_timeout_ms": 400},
    {"fetch_max_wait_ms": 100},
    {"group_id": "g", "group_instance_id": "member-1"},
    {"group_instance_id": "member-1"},
    {"group_id": "g", "group_instance_id": "a b"},
    {"groupid": "g"},
    # order
    {"groupid": "g", "request_timeout_ms": 400},
    {"request_timeout_ms": 400, "group_instance_id": "member-1"},
)

_LOUD = "the course refuses at construction a value "
#: (kind, case) -> why the simulator's outcome differs from kafka-python's on purpose: each one a
#: value the simulator refuses and kafka-python takes. The differences found the other way (the
#: simulator took what kafka-python refuses: an unknown compression_type, request_timeout_ms not
#: above fetch_max_wait_ms, group_instance_id without group_id; or refused what it takes:
#: auto_offset_reset='smallest') are fixed.
KNOWN_CONFIG_DIFFERENCES: dict[tuple[str, str], str] = {
    ("producer", "acks=2"): _LOUD + "that Kafka refuses at every produce (INVALID_REQUIRED_ACKS)",
    ("producer", "retries=-1"): _LOUD + "that kafka-python takes without a check",
    ("producer", "linger_ms=-1"): _LOUD + "kafka-python takes as no linger; Java refuses it too",
    ("consumer", "auto_offset_reset='bogus'"): _LOUD
    + "that kafka-python takes without a check (Java refuses it at construction)",
    ("consumer", "max_poll_records=0"): _LOUD + "that kafka-python refuses at each poll() (ValueError)",
    ("consumer", "session_timeout_ms=3000, heartbeat_interval_ms=3000"): _LOUD
    + "with which a member's heartbeat comes no sooner than its session expires",
}


def _case_name(case: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in case.items()) or "(defaults)"


def _outcome(make, close) -> tuple[str, type | None]:
    """``(shown outcome, exception class or None)``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            client = make()
    except Exception as exc:  # noqa: BLE001 - the exception is what is compared
        return type(exc).__name__, type(exc)
    try:
        idempotent = client.config.get("enable_idempotence")
        return ("ok" if idempotent is None else f"ok idempotent={idempotent}"), None
    finally:
        close(client)


def _agree(sim: tuple[str, type | None], real: tuple[str, type | None]) -> bool:
    """Both accepted alike, or the simulator's exception is caught by ``except <kafka-python's>``."""
    if sim[1] is None or real[1] is None:
        return sim[0] == real[0]
    return issubclass(sim[1], real[1])


def config_differences(bootstrap_servers: str) -> list[tuple[str, str, str, str]]:
    """Every case whose outcomes disagree: ``(kind, case, simulator, kafka-python)`` (listed ones
    too: :data:`KNOWN_CONFIG_DIFFERENCES` says which are). kafka-python
    connects at construction, so its clients are built against ``bootstrap_servers`` (a wire
    cluster) and closed at once."""
    cluster = Cluster(3, seed=1)
    found = []
    for kind, cases, sim_cls, real_cls in (
        ("producer", PRODUCER_CASES, SimProducer, RealProducer),
        ("consumer", CONSUMER_CASES, SimConsumer, RealConsumer),
    ):
        for case in cases:
            sim = _outcome(lambda: sim_cls(bootstrap_servers=cluster, **case), lambda c: c.close())
            started: list = []

            def tracked(**configs):
                started.append(real_cls.DEFAULT_CONFIG["kafka_client"](**configs))
                return started[-1]

            real = _outcome(
                lambda: real_cls(bootstrap_servers=bootstrap_servers, kafka_client=tracked, **case),
                lambda c: c.close(timeout=5) if kind == "producer" else c.close(),
            )
            if real[1] is not None:
                # kafka-python refuses some values after it started its network client
                # (isolation_level, group_instance_id): stop that client's I/O thread
                for client in started:
                    client.close()
            if not _agree(sim, real):
                found.append((kind, _case_name(case), sim[0], real[0]))
    return found
