"""A group member's first join with kafka-python 3.0.12, made safe.

kafka-python 3.0.12 can leave a group member outside its group for good. Read in its
``coordinator/base.py`` and ``consumer.py``, seen on the lab's cluster:

1. The member subscribes and its first ``poll()`` joins before its metadata knows the topic's
   partitions. As the group's leader it assigns nothing ("No partition metadata for topic").
2. The metadata arrives; the assignment it made no longer matches, so it rejoins.
3. That JoinGroup/SyncGroup is still on the wire when ``poll(timeout_ms)`` returns. Meanwhile the
   leader performs the new assignment, which makes the two snapshots equal again, so the next
   ``poll()`` sees nothing to rejoin for and never collects the finished join: the member stays
   "rebalancing" with no partitions and no heartbeats, is removed after ``session_timeout_ms``
   and never comes back.

The root: kafka-python 3.0.12 collects a join only if it finishes inside a ``poll()`` call. When
a rejoin is still needed, a join that finished between two polls is thrown away and a new
JoinGroup sent (``poll(timeout_ms=0)`` never joins: tests/real/test_kafka_python_join.py); when
not, as here, nothing collects it. Java's consumer awaits a join under way
(``rejoinNeededOrPending()``: "if there's a pending joinFuture, we should try to complete handling
it"). Short poll timeouts make it likely: 3 groups of 55 never settled with 50 ms polls on the
lab's cluster, none of 55 with :func:`before_first_join`.

:func:`before_first_join` fetches the metadata before the first ``poll()`` (``topics()``: one
blocking request), so the first assignment is already right and step 2 never happens. Every
consumer the course builds for real Kafka does it.
"""

from __future__ import annotations


def before_first_join(consumer) -> None:
    """Give a subscribed kafka-python consumer its topics' partitions before it joins its group."""
    if consumer.config.get("group_id") is not None and consumer.subscription():
        consumer.topics()  # the metadata update also refreshes the coordinator's snapshot
