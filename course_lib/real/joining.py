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

Java's consumer keeps awaiting a join that is under way (``rejoinNeededOrPending()``: "if there's
a pending joinFuture, we should try to complete handling it"); kafka-python 3.0.12 only asks
whether a rejoin is needed. Short poll timeouts make it likely: 1 group of 15 never settled with
50 ms polls on the lab's cluster.

:func:`before_first_join` fetches the metadata before the first ``poll()`` (``topics()``: one
blocking request), so the first assignment is already right and step 2 never happens. Every
consumer the course builds for real Kafka does it.
"""

from __future__ import annotations


def before_first_join(consumer) -> None:
    """Give a subscribed kafka-python consumer its topics' partitions before it joins its group."""
    if consumer.config.get("group_id") is not None and consumer.subscription():
        consumer.topics()  # the metadata update also refreshes the coordinator's snapshot
