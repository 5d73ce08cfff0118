"""Share-group experiments (KIP-932) on the real lab cluster, with confluent-kafka's
``ShareConsumer`` (2.16.1, preview) - the real-Kafka half of notebooks/05c_share_groups. Each
returns the numbers the simulator's scenario of the same name has
(:mod:`course_lib.share_scenarios`), so the lesson prints the two side by side.

- :func:`worker_crash` - a worker takes records, processes some of them and dies (SIGKILL of its
  own process, as a crash does: its connections close). When does the other worker get them,
  and how many are processed twice? (Kafka 4.3.1: at once - the closed connection ends the
  share session and its records are released, ``SharePartitionManager.releaseSession`` - where
  the simulator's crashed worker waits for the lock; tests/real/test_share_groups_real.py.)
- :func:`poison_message` - a handler always fails on one record and RELEASEs it: how many
  deliveries before the broker archives it?

Both need the local lab cluster (:func:`course_lib.real.lab.start_lab`): it lets a group's
``share.record.lock.duration.ms`` go down to 1 s (Kafka's floor is 15 s), and the crash kills a
process of this machine.

Taught in notebooks/05c_share_groups.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
import uuid

#: the records of every experiment are ``job-<i>``, one producer batch each (Kafka hands a share
#: consumer whole batches; the simulator's scenarios write one record per batch too)
TOPIC_STEM = "share-jobs"

# The crashing worker: a process of its own, so that its death closes its connections as a real
# crash does. It prints what it holds, then each record it finishes, then waits to be killed.
_DOOMED = r"""
import json, sys, time
from confluent_kafka import ShareConsumer
cfg = json.loads(sys.argv[1])
c = ShareConsumer(cfg["consumer"])
c.subscribe([cfg["topic"]])
deadline = time.monotonic() + cfg["timeout_s"]
got = []
while not got and time.monotonic() < deadline:
    got = [m for m in c.poll(0.2) if m.error() is None]
print(json.dumps({"held": [m.offset() for m in got]}), flush=True)
for m in got[: cfg["processed"]]:
    time.sleep(cfg["handler_ms"] / 1000)
    print(json.dumps({"processed": m.offset()}), flush=True)
time.sleep(3600)  # in the middle of the next record: killed here
"""


def _setup(kafka, group_configs: dict) -> tuple[str, str]:
    """A one-partition topic and a new share group with ``group_configs``."""
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    topic = kafka.create_topic(f"{TOPIC_STEM}-{uuid.uuid4().hex[:8]}", partitions=1)
    group = f"share-lab-{uuid.uuid4().hex[:8]}"
    # members heartbeat every second: one joining gets its partition within a second, not five
    # (the lab lowers the floor: group.share.min.heartbeat.interval.ms)
    configs = {"share.auto.offset.reset": "earliest", "share.heartbeat.interval.ms": 1000, **group_configs}
    entries = [ConfigEntry(k, str(v), incremental_operation=AlterConfigOpType.SET) for k, v in configs.items()]
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=entries)
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)
    return topic, group


def _produce(kafka, topic: str, values: list[str]) -> None:
    """Each value in a producer batch of its own."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
    for value in values:
        producer.produce(topic, value=value.encode())
        if producer.flush(30):
            raise RuntimeError(f"the lab cluster did not take {value} within 30 s")


def _consumer(kafka, group: str, max_poll_records: int) -> dict:
    return {
        "bootstrap.servers": kafka.bootstrap_servers,
        "group.id": group,
        "share.acknowledgement.mode": "explicit",
        "max.poll.records": str(max_poll_records),
    }


def _lines(proc: subprocess.Popen) -> tuple[queue.Queue, threading.Thread]:
    """The process's stdout, line by line, in a queue (a thread reads until the pipe closes)."""
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.put(json.loads(line))

    reader = threading.Thread(target=read, name="share-lab-doomed-stdout", daemon=True)
    reader.start()
    return lines, reader


def worker_crash(
    kafka,
    records: int = 20,
    max_poll_records: int = 5,
    processed_before_crash: int = 3,
    handler_ms: float = 100,
    lock_ms: float = 5_000,
    timeout_s: float = 90,
) -> dict:
    """The simulator's ``worker_crash`` on Kafka: the numbers it measures (``held_at_crash``,
    ``redelivered``, ``processed_twice``, ``redelivery_after_crash_ms``), ``delivery_counts``:
    what the other worker saw as the held records' delivery counts, and ``seconds``."""
    from confluent_kafka import AcknowledgeType, ShareConsumer

    started = time.monotonic()
    topic, group = _setup(kafka, {"share.record.lock.duration.ms": lock_ms})
    # The other worker joins first and polls until it has a warm-up record: then it is a member
    # with the partition, and what it sees after the crash depends on the locks alone (a member
    # joining later waits for its partition, up to a heartbeat interval). It then stops polling
    # until the crash, as in the simulator.
    survivor = ShareConsumer(_consumer(kafka, group, max_poll_records))
    doomed = None
    try:
        survivor.subscribe([topic])
        _produce(kafka, topic, ["warm-up"])
        warmed = []
        deadline = time.monotonic() + timeout_s
        while not warmed:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the worker got no warm-up record within {timeout_s} s")
            warmed = [m for m in survivor.poll(0.2) if m.error() is None]
        for m in warmed:
            survivor.acknowledge(m, AcknowledgeType.ACCEPT)
        survivor.commit_sync()
        _produce(kafka, topic, [f"job-{i}" for i in range(records)])
        config = {
            "consumer": _consumer(kafka, group, max_poll_records),
            "topic": topic,
            "processed": processed_before_crash,
            "handler_ms": handler_ms,
            "timeout_s": timeout_s,
        }
        doomed = subprocess.Popen(
            [sys.executable, "-c", _DOOMED, json.dumps(config)], stdout=subprocess.PIPE, text=True
        )
        lines, reader = _lines(doomed)
        held = lines.get(timeout=timeout_s)["held"]
        if not held:
            raise RuntimeError(f"the first worker got no record within {timeout_s} s")
        done_first = [lines.get(timeout=timeout_s)["processed"] for _ in range(min(processed_before_crash, len(held)))]
        doomed.kill()  # mid-record: what it finished is processed, nothing acknowledged
        doomed.wait(30)
        crashed = time.monotonic()
        reader.join(30)
        accepted: set = set()
        again: dict = {}  # held offset -> (seconds after the crash, delivery count)
        deadline = crashed + timeout_s + lock_ms / 1000
        while len(accepted) < records:
            if time.monotonic() > deadline:
                raise RuntimeError(f"only {len(accepted)} of {records} jobs accepted within {timeout_s} s")
            got = [m for m in survivor.poll(0.1) if m.error() is None]
            polled = time.monotonic()
            for m in got:
                if m.offset() in held:
                    again.setdefault(m.offset(), (polled - crashed, m.delivery_count()))
                time.sleep(handler_ms / 1000)
                survivor.acknowledge(m, AcknowledgeType.ACCEPT)
                accepted.add(m.offset())
            if got:
                survivor.commit_sync()
        return {
            "held_at_crash": len(held),
            "redelivered": len(again),
            "processed_twice": len(set(done_first) & set(again)),
            "redelivery_after_crash_ms": round(1000 * min(s for s, _ in again.values())) if again else None,
            "delivery_counts": sorted(c for _, c in again.values()),
            "seconds": round(time.monotonic() - started, 1),
        }
    finally:
        if doomed is not None:
            if doomed.poll() is None:
                doomed.kill()
                doomed.wait(30)
            if doomed.stdout is not None:
                doomed.stdout.close()
        survivor.close()


def poison_message(
    kafka, records: int = 10, poison: int = 3, delivery_count_limit: int = 5, workers: int = 2, timeout_s: float = 90
) -> dict:
    """The simulator's ``poison_message`` on Kafka: ``workers`` RELEASE ``job-<poison>`` each
    time and ACCEPT the others. ``poison_deliveries``, ``poison_delivery_counts`` and
    ``archived`` (1 when, a lock duration after its last delivery, nothing brought it back), and
    ``seconds``."""
    from confluent_kafka import AcknowledgeType, ShareConsumer

    started = time.monotonic()
    lock_ms = 2_000  # only for the check that nothing comes back: every record is acknowledged
    topic, group = _setup(
        kafka, {"share.delivery.count.limit": delivery_count_limit, "share.record.lock.duration.ms": lock_ms}
    )
    _produce(kafka, topic, [f"job-{i}" for i in range(records)])
    bad = f"job-{poison}".encode()
    consumers = [ShareConsumer(_consumer(kafka, group, 2)) for _ in range(workers)]
    try:
        for c in consumers:
            c.subscribe([topic])
        counts: list = []
        accepted: set = set()

        def work() -> None:
            for c in consumers:
                got = [m for m in c.poll(0.1) if m.error() is None]
                for m in got:
                    if m.value() == bad:
                        counts.append(m.delivery_count())
                        c.acknowledge(m, AcknowledgeType.RELEASE)
                    else:
                        accepted.add(m.offset())
                        c.acknowledge(m, AcknowledgeType.ACCEPT)
                if got:
                    c.commit_sync()

        deadline = time.monotonic() + timeout_s
        while len(accepted) < records - 1 or delivery_count_limit not in counts:
            if time.monotonic() > deadline:
                raise RuntimeError(f"not within {timeout_s} s: {len(accepted)} accepted, poison counts {counts}")
            work()
        before = len(counts)
        settle = time.monotonic() + lock_ms / 1000
        while time.monotonic() < settle:
            work()
        return {
            "poison_deliveries": len(counts),
            "poison_delivery_counts": sorted(counts),
            "archived": 1 if len(counts) == before else 0,
            "seconds": round(time.monotonic() - started, 1),
        }
    finally:
        for c in consumers:
            c.close()
