"""Topic ids on the wire: the simulator numbers topics (KRaft's TopicRecord id, a fresh one for a
topic deleted and created again); Kafka clients see a UUID.

The UUID is the number in the low bits under a fixed prefix, so it is never Kafka's reserved
zero or metadata-topic id and stays the same for a topic's whole life (Metadata v10+ carries it;
Produce v13 and Fetch v13+ name topics by it instead of by name).

>>> topic_uuid(3)
UUID('636f7572-7365-0000-0000-000000000003')
>>> topic_number(topic_uuid(3))
3
>>> topic_number(NO_TOPIC_ID) is None
True
"""

from __future__ import annotations

import uuid

NO_TOPIC_ID = uuid.UUID(int=0)
_PREFIX = int.from_bytes(b"course", "big") << 80
_LOW = (1 << 80) - 1


def topic_uuid(number: int) -> uuid.UUID:
    """The wire id of the simulator's topic ``number`` (0, no id yet: Kafka's zero UUID)."""
    return uuid.UUID(int=_PREFIX | number) if number > 0 else NO_TOPIC_ID


def topic_number(topic_id: uuid.UUID) -> int | None:
    """The simulator's topic number behind a wire id, or None if it is not one of ours."""
    value = topic_id.int
    return value & _LOW if value & ~_LOW == _PREFIX and value & _LOW else None


def topic_ids(broker) -> dict[str, int]:
    """topic -> number in ``broker``'s own metadata view."""
    return {tp[0]: state.topic_id for tp, state in broker.metadata.items()}


def names_by_uuid(broker) -> dict[uuid.UUID, str]:
    """wire id -> topic name in ``broker``'s metadata view (what a Produce v13 is resolved with)."""
    return {topic_uuid(number): name for name, number in topic_ids(broker).items() if number > 0}
