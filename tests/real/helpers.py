"""Small kafka-python helpers shared by the real-Kafka tests."""

from kafka import KafkaConsumer, TopicPartition


def read_all(bootstrap: str, topic: str, partition: int = 0, timeout_ms: int = 5000) -> list:
    """Every record of one partition from offset 0 up to the current end (read_uncommitted)."""
    c = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=timeout_ms)
    try:
        tp = TopicPartition(topic, partition)
        c.assign([tp])
        end = c.end_offsets([tp])[tp]
        c.seek_to_beginning(tp)
        out = []
        for r in c:
            out.append(r)
            if r.offset + 1 >= end:
                break
        return out
    finally:
        c.close()
