"""The share coordinator: where a share group's progress on each partition is persisted.

Kafka's share-partition leader keeps the in-flight records in memory and, whenever a record is
acknowledged, released, rejected or its lock times out, writes the change to the *share
coordinator* (``WriteShareGroupState``; ``share-coordinator`` module, records ``ShareSnapshot``
and ``ShareUpdate`` in ``__share_group_state``). A new leader - after a failover or a broker
crash - reads the state back (``ReadShareGroupState``) before it hands out anything, so
acknowledged and archived records stay so, and delivery counts survive as far as they were
written. Acquisitions are *not* written (``SharePartition.acquire`` only changes memory): a
record held when its leader dies is delivered again with the delivery count last persisted.

As for the other coordinators the state is a fold over a replicated internal topic
(:mod:`.coordinator_log`): ``__share_group_state``, one partition here (Kafka: 50). It is created
on first use, so a run without share groups never sees it.

Fencing: the coordinator remembers the highest leader epoch that wrote to a share-partition and
refuses writes from an older one (``FENCED_LEADER_EPOCH``) - a deposed leader cannot overwrite
what its successor persisted.

Taught in notebooks/05c_share_groups.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar

from kafka import errors as Errors

from .coordinator_log import CoordinatorLog
from .protocol import (
    DeleteShareGroupStateRequest,
    InitializeShareGroupStateRequest,
    ReadShareGroupStateRequest,
    ReadShareGroupStateSummaryRequest,
    ShareGroupStateResponse,
    ShareGroupStateSummaryResponse,
    WriteShareGroupStateRequest,
)

SHARE_STATE_TOPIC = "__share_group_state"
#: the states a record is done in (share_partition.FINAL: that module imports this one)
_DONE = ("ACKNOWLEDGED", "ARCHIVED")


class ShareCoordinator(CoordinatorLog):
    TOPIC = SHARE_STATE_TOPIC

    def __init__(self, broker):
        super().__init__(broker)
        self.reset()

    def reset(self) -> None:
        #: (group, topic, partition) -> [leader epoch, start offset, {offset: (state, count)}]
        self.state: dict[tuple, list] = {}

    def apply(self, stored) -> None:
        for record in stored.batch.records:
            if record.value is None:  # a tombstone: the group's state here is deleted
                self.state.pop(record.key, None)
                continue
            key, (epoch, start, updates) = record.key, record.value
            entry = self.state.setdefault(key, [epoch, start, {}])
            entry[0], entry[1] = max(entry[0], epoch), start
            records = entry[2]
            for offset, state, count in updates:
                records[offset] = (state, count)
            for offset in [o for o in records if o < start]:
                del records[offset]

    def persisted(self, group: str, tp) -> tuple[int, dict] | None:
        """(start offset, {offset: (state, count)}) as committed, or None (for the invariants)."""
        entry = self.state.get((group, tp[0], tp[1]))
        return None if entry is None else (entry[1], dict(entry[2]))

    # ---- requests from share-partition leaders ---------------------------------------------------
    def handle(self, src: str, req) -> None:
        if not self.refresh():
            return self.broker.send(src, ShareGroupStateResponse(req.corr, Errors.NotCoordinatorError))
        log = self.partition().log
        if isinstance(req, (ReadShareGroupStateRequest, ReadShareGroupStateSummaryRequest)) and log.hw < log.leo:
            # a new coordinator answers once everything in its log counts (Kafka loads the whole
            # log before serving: COORDINATOR_LOAD_IN_PROGRESS): a state read never misses a write
            # that was confirmed to the old leader
            return self.broker.send(src, ShareGroupStateResponse(req.corr, Errors.CoordinatorLoadInProgressError))
        self.HANDLERS[type(req)](self, src, req)

    def _read(self, src: str, req: ReadShareGroupStateRequest) -> None:
        """The state, after recording the reader's leader epoch: from now on a write from an
        older leader is fenced (Kafka's ReadShareGroupState carries the leader epoch for this)."""
        key = (req.group, req.tp[0], req.tp[1])
        entry = self.state.get(key)
        if entry is None:
            return self.broker.send(src, ShareGroupStateResponse(req.corr))
        if req.leader_epoch < entry[0]:
            return self.broker.send(src, ShareGroupStateResponse(req.corr, Errors.FencedLeaderEpochError))

        def answer(error) -> None:
            if error is not None:
                return self.broker.send(src, ShareGroupStateResponse(req.corr, Errors.CoordinatorNotAvailableError))
            current = self.state[key]
            states = tuple((o, s, c) for o, (s, c) in sorted(current[2].items()))
            self.broker.send(src, ShareGroupStateResponse(req.corr, None, current[1], states))

        if req.leader_epoch > entry[0]:
            self.write([(key, (req.leader_epoch, entry[1], ()))], answer)
        else:
            answer(None)

    def _summary(self, src: str, req: ReadShareGroupStateSummaryRequest) -> None:
        """Each share-partition of the group: its leader epoch, start offset and how many records
        from the start offset on are done (Kafka's deliveryCompleteCount: the lag leaves them out)."""
        rows = tuple(
            (topic, partition, epoch, start, sum(1 for o, (s, _) in states.items() if o >= start and s in _DONE))
            for (group, topic, partition), (epoch, start, states) in sorted(self.state.items())
            if group == req.group
        )
        self.broker.send(src, ShareGroupStateSummaryResponse(req.corr, None, rows))

    def _write(self, src: str, req: WriteShareGroupStateRequest) -> None:
        key = (req.group, req.tp[0], req.tp[1])
        entry = self.state.get(key)
        if entry is not None and req.leader_epoch < entry[0]:
            return self.broker.send(src, ShareGroupStateResponse(req.corr, Errors.FencedLeaderEpochError))
        self._write_answer(src, req.corr, [(key, (req.leader_epoch, req.start_offset, req.updates))])

    # ---- requests from the group coordinator (AlterShareGroupOffsets, DeleteShareGroupOffsets) -----
    def _initialize(self, src: str, req: InitializeShareGroupStateRequest) -> None:
        """The state starts again at the given offset with nothing in flight: the old one's
        tombstone, then a snapshot (``ShareCoordinatorShard.initializeState``). The leader epoch
        seen stays, so a deposed leader is still fenced."""
        key = (req.group, req.tp[0], req.tp[1])
        epoch = self.state[key][0] if key in self.state else -1
        self._write_answer(src, req.corr, [(key, None), (key, (epoch, req.start_offset, ()))])

    def _delete(self, src: str, req: DeleteShareGroupStateRequest) -> None:
        """The group's state of each partition goes: a tombstone each (``deleteState``)."""
        self._write_answer(src, req.corr, [((req.group, t, p), None) for t, p in req.tps])

    def _write_answer(self, src: str, corr: int, records: list) -> None:
        self.write(
            records,
            lambda error: self.broker.send(
                src, ShareGroupStateResponse(corr, error and Errors.CoordinatorNotAvailableError)
            ),
        )

    #: request class -> its handler (the broker hands this coordinator every class named here)
    HANDLERS: ClassVar[dict[type, Callable[[Any, str, Any], None]]] = {
        ReadShareGroupStateRequest: _read,
        ReadShareGroupStateSummaryRequest: _summary,
        WriteShareGroupStateRequest: _write,
        InitializeShareGroupStateRequest: _initialize,
        DeleteShareGroupStateRequest: _delete,
    }
