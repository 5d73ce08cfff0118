"""What the group and transaction coordinators have in common: their state lives in a
replicated internal topic, so it survives the broker that holds it.

The coordinator for a group (or a ``transactional.id``) is whichever broker leads partition 0 of
``__consumer_offsets`` (``__transaction_state``). Its state is a fold over that partition's log
up to the high watermark - a write counts once it is replicated, exactly as Kafka's coordinators
update their caches when the append completes. When leadership moves, the new leader replays
the log and carries on: committed offsets and transaction decisions survive broker crashes.

(Kafka spreads groups over 50 partitions and transactional ids over 50 more; one partition each
keeps the simulation small without changing the mechanism.)
"""

from __future__ import annotations

from kafka import errors as Errors

from .protocol import CoordinatorRequest, CoordinatorResponse, Record, RecordBatch


class CoordinatorLog:
    TOPIC = ""

    def __init__(self, broker):
        self.broker = broker
        self._epoch = None
        self._applied = 0
        #: True while a new coordinator replays its partition (``apply`` may restore state it
        #: already holds in memory otherwise: the current coordinator's memory is ahead of its log)
        self.loading = False

    @property
    def tp(self):
        return (self.TOPIC, 0)

    def partition(self):
        p = self.broker.partitions.get(self.tp)
        return p if p is not None and p.is_leader else None

    def refresh(self) -> bool:
        """Replay what was committed since last time (everything, after a leadership change)."""
        p = self.partition()
        if p is None:
            self._epoch = None
            return False
        hw = p.log.hw
        self.loading = self._epoch != p.leader_epoch
        if self.loading:
            self._epoch = p.leader_epoch
            self._applied = 0
            self.reset()
            # a new coordinator loads its partition to the log end, as Kafka's do
            # (TransactionStateManager / GroupMetadataManager load until the log end offset): a
            # leader elected a moment ago may not have learnt the high watermark yet, and its
            # whole log is what the followers will hold
            hw = p.log.leo
        try:
            if self._applied < hw:
                for stored in p.log.read(self._applied, below=hw):
                    if stored.base_offset >= self._applied:
                        self.apply(stored)
                self._applied = hw
        finally:
            loaded, self.loading = self.loading, False
        if loaded:
            self.loaded()
        return True

    def write(
        self, records: list[tuple], done, producer_id: int = -1, producer_epoch: int = -1, transactional: bool = False
    ) -> None:
        """Append ``(key, value)`` records with acks=all; ``done(error)`` when replicated."""
        p = self.partition()
        if p is None:
            return done(Errors.NotCoordinatorError)
        now = self.broker.sim.now
        batch = RecordBatch([Record(k, v, now) for k, v in records], producer_id, producer_epoch, -1, transactional)

        def appended(result):
            if result.error is None:
                self.refresh()
            done(result.error)

        p.append(batch, -1, 30_000, appended)

    def respond(self, src: str, req: CoordinatorRequest, error=None, result=None) -> None:
        self.broker.send(src, CoordinatorResponse(req.corr, req.api, error, result))

    # subclasses
    def reset(self) -> None:
        raise NotImplementedError

    def apply(self, stored) -> None:
        raise NotImplementedError

    def loaded(self) -> None:
        """After a new coordinator's replay: restart what is kept in memory only (timers)."""
