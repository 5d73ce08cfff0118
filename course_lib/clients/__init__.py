"""Clients for the simulator with kafka-python's names: learner code moves to real Kafka as is.

Taught in notebooks/02_acks_and_durability.
"""

from .config import ConfigurationError, IdempotenceDisabledWarning
from .future import Future, FutureRecordMetadata, RecordMetadata
from .admin import KafkaAdminClient
from .consumer import KafkaConsumer
from .producer import KafkaProducer
from .share_consumer import AcknowledgeType, ShareConsumer

__all__ = [
    "KafkaProducer",
    "KafkaConsumer",
    "KafkaAdminClient",
    "ShareConsumer",
    "AcknowledgeType",
    "ConfigurationError",
    "IdempotenceDisabledWarning",
    "Future",
    "FutureRecordMetadata",
    "RecordMetadata",
]
