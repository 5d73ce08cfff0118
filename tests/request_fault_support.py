"""One send under a request fault, through a backend - what tests/wire/test_request_faults.py
and tests/real/test_request_faults.py compare across clusters."""

import pytest
from kafka import errors as Errors

from course_lib.history import Nemesis

#: no retry, so the first attempt's fate is the send's
CONFIG = {"acks": "all", "enable_idempotence": False, "retries": 0, "request_timeout_ms": 1000}


def one_send_under(backend, fault: str) -> tuple[type, int, list[str]]:
    """Inject ``fault`` before one send: (the send's error, records appended, nemesis lines)."""
    topic = backend.create_topic(f"under-{fault}", min_insync_replicas=2)
    producer = backend.producer(**CONFIG)
    producer.send(topic, b"warm-up").get(timeout=10)
    inject = {
        Nemesis.LOSE_NEXT_REQUEST: backend.lose_next_request,
        Nemesis.REFUSE_NEXT_REQUEST: backend.refuse_next_request,
    }
    inject[fault](producer, topic)
    with pytest.raises(Errors.KafkaError) as failed:
        producer.send(topic, b"x").get(timeout=10)
    backend.close_clients()
    return type(failed.value), backend.end_offset(topic), [op.f for op in backend.history if op.process == "nemesis"]
