"""The share-group differential's client side: the producer that writes a sequence's records, and
a sequence's members - share consumers of the share workload's contract (:func:`share_consumer`),
called by name.

The differential (:mod:`course_lib.experiments.share_differential`) runs the same steps on every
client x cluster pair. What keeps a client and calls it is a client adapter (``tests/test_layers.py``),
so that part is here: :class:`ShareClients` (one per side: its producer, and how its members are
built and die) and :class:`ShareMembers` (one per sequence: ``a`` and ``b``, each joined, polled,
acknowledged, committed - a commit's answer in Kafka's words -, closed, killed or frozen by its
name; ``leave`` while it holds a record; ``commit_async`` with the acknowledgement commit callback
that reports it). The differential replays its steps on a sequence's members through the
call-sequence contract (:mod:`.call_sequences`); the sides in experiments keep the cluster's part -
topics, the group's configs, a leader's crash, whether a member has the partition, the clock - and
hold no client.

The simulator's share consumer lives in the simulated cluster's process, in virtual time: it dies
with ``crash()`` (``crash(host=True)``: its machine gone, no connection closes). Any other client's
that is to die runs in a process of its own (``own_process``), with ``kill()`` and ``freeze()``.
"""

from __future__ import annotations

import uuid
from typing import Any, Callable

from . import share_consumer
from ..clients.share_consumer import AcknowledgeType

SIMULATOR = "simulator"


def error_name(error: Exception) -> str:
    """A KafkaException's error by Kafka's name: ``name()`` of the KafkaError it wraps (both
    clients wrap one), else its text."""
    inner = error.args[0] if error.args else error
    name = getattr(inner, "name", None)
    return name() if callable(name) else str(inner)


def _answer(results: dict) -> str:
    """A commit's answer ``{TopicPartition: None or KafkaException}``, a word per partition."""
    return ",".join("ok" if e is None else error_name(e) for e in results.values()) or "nothing"


class ShareMembers:
    """One sequence's share consumers of ``client`` by name, each subscribed to ``topic`` in
    ``group`` with explicit acknowledgement; ``servers``: the simulated Cluster for the simulator's,
    else a bootstrap string. Other than the simulator's, each gets a ``client.id`` of its own: the
    group coordinator names members by it (:meth:`client_ids`)."""

    def __init__(self, client: str, servers: Any, topic: str, group: str):
        self._client, self._servers, self._topic, self._group = client, servers, topic, group
        self._consumers: dict[str, Any] = {}
        self._client_ids: dict[str, str] = {}
        #: members whose machine is gone (:meth:`freeze`): out of the group's sequence, not ended
        self._frozen: dict[str, Any] = {}

    def __contains__(self, name: str) -> bool:
        return name in self._consumers

    def join(self, name: str, own_process: bool = False) -> None:
        """M, a new share consumer, subscribed; ``own_process``: one that :meth:`kill` and
        :meth:`freeze` can end (the simulator's dies in virtual time whichever it is)."""
        more: dict[str, str] = {}
        if self._client != SIMULATOR:
            more["client.id"] = self._client_ids[name] = f"share-diff-{uuid.uuid4().hex[:8]}"
        config = {
            "bootstrap.servers": self._servers,
            "group.id": self._group,
            "share.acknowledgement.mode": "explicit",
            **more,
        }
        consumer = share_consumer(self._client, config, own_process and self._client != SIMULATOR)
        consumer.subscribe([self._topic])
        self._consumers[name] = consumer

    def poll(self, name: str, timeout_s: float) -> list:
        """M's records of one poll (a message carrying an error left out)."""
        return [m for m in self._consumers[name].poll(timeout_s) if m.error() is None]

    def acknowledge(self, name: str, message: Any, ack: str) -> None:
        """``ack``: "accept", "release" or "reject"."""
        self._consumers[name].acknowledge(message, AcknowledgeType[ack.upper()])

    def commit_sync(self, name: str) -> str:
        """M commits its acknowledgements: the answer, a word per partition ("ok" or the error by
        Kafka's name; "nothing": no partition answered)."""
        return _answer(self._consumers[name].commit_sync())

    def commit_async(
        self, name: str, message: Any, ack: str, polled: Callable[[], bool], polls: int
    ) -> tuple[Any, list]:
        """M acknowledges ``message`` (``ack``) and commits with ``commit_async``: what that
        returned, and what the acknowledgement commit callback reported meanwhile, a report per
        call - ``[[offsets, "ok" or the error by Kafka's name] per partition]``. The callback is
        M's until it has reported or ``polled()`` (M polls once; True: that poll brought records,
        which the application must acknowledge before it waits on) - at most ``polls`` times -
        and no longer: a callback left in place would report a later commit too."""
        reports: list = []

        def reported(offsets: dict, error: Any) -> None:
            outcome = "ok" if error is None else error_name(error)
            reports.append([[sorted(o), outcome] for _, o in sorted(offsets.items(), key=str)])

        consumer = self._consumers[name]
        consumer.set_acknowledgement_commit_callback(reported)  # before the acknowledgement it reports
        self.acknowledge(name, message, ack)
        returned = consumer.commit_async()
        for _ in range(polls):
            if reports or polled():
                break
        consumer.set_acknowledgement_commit_callback(None)
        return returned, reports

    def close(self, name: str) -> None:
        """M closes: it leaves the group."""
        self._consumers.pop(name).close()

    def leave(self, name: str, how: str) -> None:
        """M goes away holding what it holds, ``how``: "close" (:meth:`close`), "kill"
        (:meth:`kill`) or "freeze" (:meth:`freeze`)."""
        {"close": self.close, "kill": self.kill, "freeze": self.freeze}[how](name)

    def kill(self, name: str) -> None:
        """M crashes: no acknowledgement, no leave; its connections close."""
        consumer = self._consumers.pop(name)
        if self._client == SIMULATOR:
            consumer.crash()
        else:
            consumer.kill()  # SIGKILL of its process
            consumer.close()  # reaps it

    def freeze(self, name: str) -> None:
        """M's machine is gone: nothing runs, its connections stay open until :meth:`end_frozen`."""
        consumer = self._frozen[name] = self._consumers.pop(name)
        if self._client == SIMULATOR:
            consumer.crash(host=True)  # no connection closes
        else:
            consumer.freeze()  # SIGSTOP of its process

    def end_frozen(self, name: str) -> None:
        """The frozen M's process ends: its record comes back."""
        self._frozen.pop(name).close()

    def all_assigned(self) -> bool:
        """Whether each member shows a partition assigned (the simulator's consumer shows it)."""
        return all(c.assignment() for c in self._consumers.values())

    def client_ids(self) -> set[str]:
        """The members' ``client.id``: how the group coordinator names them."""
        return {self._client_ids[name] for name in self._consumers}

    def close_all(self) -> None:
        for consumer in self._consumers.values():
            consumer.close()
        self._consumers.clear()


class ShareClients:
    """A side's clients: ``producer`` writes the records, each a producer batch of its own; the
    members are ``client``'s share consumers on ``servers`` (see :class:`ShareMembers`)."""

    def __init__(self, client: str, servers: Any, producer: Any):
        self._client, self._servers, self._producer = client, servers, producer

    def produce(self, topic: str, values: list[str]) -> None:
        for value in values:
            if self._client == SIMULATOR:  # its future completes on the virtual clock: flush runs it
                self._producer.send(topic, value.encode())
                self._producer.flush()
            else:
                self._producer.send(topic, value.encode()).get(timeout=30)

    def members(self, topic: str, group: str) -> ShareMembers:
        return ShareMembers(self._client, self._servers, topic, group)

    def close(self) -> None:
        self._producer.close()
