"""``KafkaConsumer`` for the simulator, with kafka-python's names and behaviour.

- ``subscribe()`` joins a consumer group: the group coordinator assigns partitions, and the
  consumer starts each one at the group's *committed* offset (or per ``auto_offset_reset``).
  ``assign()`` takes partitions by hand, without a group.
- ``poll()`` returns records below the high watermark (``read_uncommitted``) or below the last
  stable offset, minus aborted transactions (``read_committed``), and moves the *position*.
- ``commit()`` stores the position (the offset of the *next* record to read) for the group;
  ``enable_auto_commit`` does it every ``auto_commit_interval_ms`` at the start of a poll, before
  a rebalance and on close - committing what earlier polls returned, whether or not it was
  processed. That is why auto-commit is neither at-most-once nor exactly-once.
- Heartbeats run in the background (kafka-python's heartbeat thread); a consumer that stops
  them (crashes) is removed after ``session_timeout_ms`` and its partitions move to others.
- ``max_poll_interval_ms``: the heartbeat thread also watches the time since the last ``poll()``.
  Past the interval (checked at the next heartbeat tick, as kafka-python does) the consumer
  *leaves the group* itself: its partitions go to the others, a late ``commit()`` raises
  ``CommitFailedError`` and the next ``poll()`` rejoins - after ``on_partitions_lost``. A slow
  handler is thus the most common way to process records twice.
- ``subscribe(listener=ConsumerRebalanceListener)``: ``on_partitions_revoked`` runs inside the
  ``poll()`` that rejoins, before the partitions are given up (commit there), and
  ``on_partitions_assigned`` inside the ``poll()`` that gets the new assignment.
- ``group_instance_id`` (static membership, KIP-345): the member keeps its partitions across a
  restart - it sends no LeaveGroup on ``close()``, and rejoining with the same instance id gets
  the same assignment without a rebalance; only ``session_timeout_ms`` of silence removes it.

- ``group_protocol="consumer"`` (the Java client's ``group.protocol``; kafka-python has only the
  classic protocol): the consumer joins a *consumer group* (KIP-848) as the Java client 4.3.1
  does - ConsumerGroupHeartbeat, the coordinator's assignor (``group_remote_assignor``),
  incremental reconciliation, member epochs: :mod:`.consumer_protocol`. The constructor picks
  the membership strategy once (:mod:`.group_membership`); the rest of the consumer is the same.

- The rest of kafka-python's API, with its exception classes in its order: ``pause``/``resume``/
  ``paused``, ``highwater`` (from the last fetch a poll took in; None before), ``seek_to_beginning``/
  ``seek_to_end`` (looked up inside the next ``poll()`` or ``position()``, as an
  ``auto_offset_reset`` is), pattern subscriptions, ``unsubscribe`` (leaves the group), and the
  offset lookups of :mod:`.offset_lookup`. tests/real/test_consumer_api_differential.py
  compares them call by call with kafka-python on Kafka 4.3.1.

Every poll and commit is recorded in the cluster's history for the checker.

Taught in notebooks/05_consumer_delivery_semantics and notebooks/05b_consumer_groups.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Sequence

from kafka import errors as Errors
from kafka.consumer.subscription_state import ConsumerRebalanceListener
from kafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

from ..broker.broker import node_name
from ..broker.protocol import ConsumerFetchRequest, MetadataRequest, OffsetFetchRequest
from ..history import FAIL, INFO, Nemesis, OK, OpName
from .classic_membership import ClassicMembership
from .config import resolve_consumer_config
from .consumer_protocol import ConsumerProtocolMembership
from .fetching import Fetching, _Partition
from .group_membership import GroupMembership
from .group_offsets import GroupOffsets
from .offset_lookup import EARLIEST, LATEST, OffsetLookup

#: group_protocol -> how the consumer is a member of its group
MEMBERSHIPS: dict[str, type[GroupMembership]] = {
    "classic": ClassicMembership,
    "consumer": ConsumerProtocolMembership,
}


class KafkaConsumer(GroupOffsets, Fetching, OffsetLookup):
    def __init__(self, *topics, **configs):
        self.config = resolve_consumer_config(**configs)
        self._attach("consumer")
        self._read_committed = self.config["isolation_level"] == "read_committed"
        self._group = self.config["group_id"]
        self._subscription: tuple = ()
        self._subscribed = False  # subscribe() called (kafka-python's subscription is then a set, maybe empty)
        self._pattern: re.Pattern | None = None
        self._manual = False
        self._partitions: dict[tuple, _Partition] = {}
        self._leaders: dict[tuple, int | None] = {}
        self._leader_epochs: dict[tuple, int] = {}  # from metadata: the leader epoch each leader has
        self._leaders_by_tp: dict[tuple, tuple] = {}  # every partition's (leader, epoch), last metadata answer
        self._topic_partitions: dict[str, int] = {}
        # the topics kafka-python's ClusterMetadata tracks (set_topics): see _track_topics
        self._tracked_topics: set[str] = set()
        self._topic_ids: dict[str, int] = {}
        self._vanished: set[str] = set()  # subscribed topics deleted: metadata is asked again until back
        self._member_id = ""
        self._generation = -1
        self._joining = False
        self._needs_join = False
        self._fetching_committed = False
        # tp -> the state a commit made before its position was looked up: an answer to an
        # earlier lookup is not for it (_committed_before_looked_up)
        self._looked_up_again: dict[tuple, _Partition] = {}
        self._metadata_corr = None
        self._heartbeat_gen = 0
        self._listener = None
        self._assigned_pending = None  # partitions to announce to the listener at the end of poll()
        self._last_poll_ms = self._sim.now
        self._polling = False
        self._in_position = False
        self._left_group = False  # left after max_poll_interval_ms; rejoin only from poll()
        self._next_auto_commit = self._sim.now + self.config["auto_commit_interval_ms"]
        self._membership = _membership_for(self)
        if topics:
            self.subscribe(topics)

    def __repr__(self) -> str:
        return f"<KafkaConsumer {self.node_id} group={self._group!r} generation={self._generation}>"

    # ---- kafka-python API ------------------------------------------------------------------------
    def subscribe(self, topics=(), pattern=None, listener=None):
        # kafka-python's checks, in its order (SubscriptionState.subscribe)
        if not topics and not pattern:
            raise ValueError("Must provide topics or pattern")
        if topics and pattern:
            raise Errors.IllegalStateError("subscribe() takes a list of topics or a pattern, not both")
        if not pattern and (isinstance(topics, str) or not isinstance(topics, Sequence)):
            raise TypeError(
                f"Topics must be a list (or non-str sequence), got {topics!r}: write subscribe([{topics!r}])"
            )
        if self._manual:
            raise Errors.IllegalStateError("subscribe() after assign(): choose one way to get partitions")
        if listener is not None and not isinstance(listener, ConsumerRebalanceListener):
            raise TypeError(
                "listener must be a kafka.ConsumerRebalanceListener (subclass it and override "
                "on_partitions_revoked / on_partitions_assigned)"
            )
        if self._group is None:
            # kafka-python accepts it and then never joins: every poll() returns {}
            warnings.warn(
                "subscribe() without group_id: kafka-python accepts it, but the consumer never joins a group "
                "and poll() returns nothing. Set group_id, or use assign() without a group.",
                stacklevel=2,
            )
        self._listener = listener
        self._subscribed = True
        self._pattern = re.compile(pattern) if pattern else None
        self._subscription = self._matching_topics(self._pattern) if self._pattern else tuple(sorted(topics))
        self._membership.subscribed()
        self._track_topics(() if pattern else topics, every=bool(pattern))
        self._advance()

    def subscription(self):
        return set(self._subscription) if self._subscribed else None

    def assign(self, partitions):
        if not partitions:  # kafka-python: assign([]) is unsubscribe()
            return self.unsubscribe()
        self._auto_commit_now()
        if self._subscribed:
            raise Errors.IllegalStateError("assign() after subscribe(): choose one way to get partitions")
        self._manual = True
        self._set_assignment([tuple(tp) for tp in partitions])
        self._track_topics(tp[0] for tp in partitions)
        self._advance()

    def _track_topics(self, topics, every: bool = False) -> None:
        """kafka-python's ClusterMetadata.set_topics after assign() or subscribe(): a topic it does
        not track yet (or a pattern: every topic) asks its network loop for a metadata update
        (request_update), which close() stopped - so on a closed consumer the call raises
        RuntimeError, its assignment or subscription made (found by the differential, seed 201)."""
        topics = set(topics)
        if every or not topics <= self._tracked_topics:
            self._tracked_topics = topics
            self._check_network()

    def assignment(self):
        return {TopicPartition(*tp) for tp in self._partitions}

    def unsubscribe(self):
        """Forget the subscription and the assignment and leave the group (kafka-python: auto-commit
        first, then LeaveGroup unless the member is static); assign() or subscribe() may follow."""
        self._auto_commit_now()
        self._subscription, self._subscribed, self._pattern, self._manual = (), False, None, False
        self._set_assignment([])
        # kafka-python's unsubscribe() then calls maybe_leave_group() over its network loop, which
        # close() stopped: a closed consumer forgets its partitions and raises (KafkaConsumer.unsubscribe)
        self._check_network()
        if self._member_id and self._coordinator is not None and self.config["group_instance_id"] is None:
            self._membership.leave()
        if not self._membership.KEEPS_MEMBER_ID:
            self._member_id = ""
        self._generation = -1
        self._needs_join = False
        self._heartbeat_gen += 1  # no member, no heartbeats

    def group_metadata(self):
        if self._group is None:
            return ConsumerGroupMetadata(group_id=None)
        return ConsumerGroupMetadata(
            self._group,
            self._membership.generation_shown(),
            self._member_id,
            None,
            "<stable>" if self._generation >= 0 and not self._needs_join else "<rebalancing>",
        )

    def poll(self, timeout_ms=0, max_records=None, update_offsets=True):
        """Records fetched since the last poll, ``{TopicPartition: [ConsumerRecord, ...]}``."""
        if timeout_ms < 0:
            raise ValueError("Timeout must not be negative")
        if max_records is None:
            max_records = self.config["max_poll_records"]
        if not isinstance(max_records, int):
            raise TypeError("max_records must be an integer")
        if max_records <= 0:
            raise ValueError("max_records must be positive")
        self._check_open()
        self._last_poll_ms = self._sim.now  # the heartbeat thread's liveness clock (max_poll_interval_ms)
        self._left_group = False
        self._polling = True  # kafka-python refreshes that clock all along a long poll(timeout_ms)
        try:
            return self._poll(timeout_ms, max_records)
        finally:
            self._polling = False
            self._last_poll_ms = self._sim.now
            self._membership.polled()

    def _poll(self, timeout_ms, max_records) -> dict:
        self._membership.check_poll()
        if self._needs_join and self._partitions and self._subscription:
            self._membership.revoke_before_rejoin()
        if self.config["enable_auto_commit"] and self._sim.now >= self._next_auto_commit:
            self._auto_commit()
        self._positions_looked_up()  # after the auto-commit, as kafka-python's update_fetch_positions
        self._advance(from_poll=True)
        if not self._has_data() and timeout_ms:
            self._wait(lambda: self._has_data() or self._assigned_pending is not None, timeout_ms)
        if self._assigned_pending is not None:
            # kafka-python calls on_partitions_assigned inside poll(), after the join and before
            # returning records; the listener may commit or seek
            assigned, self._assigned_pending = self._assigned_pending, None
            if self._listener is not None:
                self._listener.on_partitions_assigned(assigned)
            if not self._has_data() and timeout_ms:
                self._wait(self._has_data, max(self._last_poll_ms + timeout_ms - self._sim.now, 0))
        return self._drain(max_records)

    def seek(self, partition, offset):
        # kafka-python raises TypeError for a plain (topic, partition) tuple; the simulator accepts
        # one, because the course's own pipeline and grading harness pass them
        if not isinstance(partition, tuple):
            raise TypeError("partition must be a TopicPartition namedtuple")
        if not isinstance(offset, int) or offset < 0:
            raise ValueError(f"offset must be an int >= 0, got {offset!r}")
        state = self._partitions.get(tuple(partition))
        if state is None:
            raise ValueError(
                f"Unassigned partition {tuple(partition)}: seek() needs a partition of assignment() "
                f"({sorted(self._partitions)})"
            )
        state.position = state.fetch_offset = offset
        state.reset_to = None
        state.buffer.clear()
        state.fetching = None
        self._history.record(self.node_id, INFO, OpName.SEEK, offset, topic=partition[0], partition=partition[1])

    def seek_to_beginning(self, *partitions):
        """Move to the first offset - looked up (ListOffsets) at the next poll() or position()."""
        self._seek_to(partitions, EARLIEST)

    def seek_to_end(self, *partitions):
        """Move to the end: the high watermark, or the last stable offset under read_committed -
        looked up at the next poll() or position(), so records written until then are skipped."""
        self._seek_to(partitions, LATEST)

    def position(self, partition, timeout_ms=None):
        _check_tp(partition)
        state = self._partitions.get(partition)
        if state is None:
            raise Errors.IllegalStateError(
                f"Partition is not assigned: {tuple(partition)}; assigned: {sorted(self._partitions)}"
            )
        if any(s.position is None or s.early for s in self._partitions.values()):
            # kafka-python's position() first looks up every assigned partition's missing
            # position (committed offset, reset) over its network loop, which close() stopped
            self._check_network()
        self._in_position = True  # a seek_to_beginning/_end may be looked up now
        self._positions_looked_up()  # kafka-python's position() updates every partition's
        try:
            self._advance()
            # kafka-python's position() waits for its whole lookup (KafkaConsumer.position: the
            # committed offsets, then the reset task of every partition awaiting one), not the
            # asked partition's alone: a commit() next commits them all (found by the
            # differential, seed 107)
            self._wait(
                lambda: all(s.position is not None for s in self._partitions.values()),
                timeout_ms or self.config["request_timeout_ms"],
            )
        finally:
            self._in_position = False
        return state.position

    def highwater(self, partition):
        """The high watermark of the last fetch answer of ``partition`` a poll() took in; None before
        one (and while it is paused: nothing is fetched)."""
        _check_tp(partition)
        state = self._partitions.get(partition)
        if state is None:
            raise Errors.IllegalStateError(f"Partition is not assigned: {tuple(partition)}")
        return state.highwater

    def pause(self, *partitions):
        """Stop fetching ``partitions`` (no rebalance): poll() returns nothing of them until resume()."""
        for tp in self._each_assigned(partitions, "pause"):
            state = self._partitions[tp]
            state.paused = True
            state.fetching = None  # an answer still in flight is dropped, as kafka-python drops it
            if state.buffer:  # records fetched but not returned are fetched again after resume()
                state.fetch_offset = state.position
                state.buffer.clear()

    def paused(self):
        return {TopicPartition(*tp) for tp, state in self._partitions.items() if state.paused}

    def resume(self, *partitions):
        for tp in self._each_assigned(partitions, "resume"):
            self._partitions[tp].paused = False
        self._advance()

    def committed(self, partition, metadata=False, timeout_ms=None):
        if self._group is None:
            raise Errors.IllegalStateError("committed() needs a group_id")
        _check_tp(partition)
        self._check_network()
        tp = tuple(partition)
        result = self._membership.call(OffsetFetchRequest(group=self._group, partitions=[tp]), timeout_ms)
        offset = result[tp]
        if offset < 0:
            return None
        return OffsetAndMetadata(offset, "", -1) if metadata else offset

    def commit(self, offsets=None, timeout_ms=None):
        """Commit (synchronously) the given offsets, default: the position of every assigned partition."""
        if self._group is None:
            raise Errors.IllegalStateError("commit() needs a group_id")
        offsets = self._offsets_to_commit(offsets)
        self._check_network()  # kafka-python enters its (closed) network loop before looking at them
        if not offsets:  # kafka-python returns before any request or membership check
            return
        op = self._history.invoke(self.node_id, OpName.COMMIT, _commit_value(offsets))
        try:
            self._membership.check_commit()
            self._membership.call(self._commit_request(offsets), timeout_ms)
            self._committed_before_looked_up(offsets)
        except Exception as exc:
            self._history.complete(
                op, FAIL if isinstance(exc, Errors.CommitFailedError) else INFO, error=type(exc).__name__
            )
            raise
        self._history.complete(op, OK)

    def commit_async(self, offsets=None, callback=None):
        if self._group is None:
            raise Errors.IllegalStateError("commit_async() needs a group_id")
        offsets = self._offsets_to_commit(offsets)
        # kafka-python's ConsumerCoordinator.commit_offsets_async schedules the commit (or the
        # coordinator lookup first) on its network loop, which close() stopped - even with nothing
        # to commit
        self._check_network()
        op = self._history.invoke(self.node_id, OpName.COMMIT, _commit_value(offsets))

        def done(error, result):
            self._history.complete(op, OK if error is None else INFO, error=error and error.__name__)
            if error is None:
                self._committed_before_looked_up(offsets)
            if callback is not None:
                callback(
                    {TopicPartition(*tp): OffsetAndMetadata(o, "", -1) for tp, o in offsets.items()},
                    result if error is None else error(),
                )

        try:
            self._membership.check_commit()
        except (Errors.CommitFailedError, Errors.RebalanceInProgressError) as exc:
            self._history.complete(op, FAIL, error=type(exc).__name__)
            if callback is not None:
                callback({TopicPartition(*tp): OffsetAndMetadata(o, "", -1) for tp, o in offsets.items()}, exc)
            return
        self._send_coordinator(self._commit_request(offsets), done)

    def _committed_before_looked_up(self, offsets) -> None:
        """kafka-python looks a missing position up (the committed offset, else the reset) only in
        poll() or position(): an offset committed before then is the position it finds. The
        simulator's lookup went earlier (``_Partition.early``), before this commit: it is
        forgotten and made again (found by the differential, seed 174: assign, commit offset 3,
        read started at 0 where kafka-python's started at 3)."""
        for tp in offsets:
            state = self._partitions.get(tp)
            if state is not None and state.reset_to is None and (state.early or state.position is None):
                # a new state: answers still on their way to the old one (the committed offset
                # looked up before this commit, the reset after it) land there, unseen
                fresh = self._partitions[tp] = self._looked_up_again[tp] = _Partition()
                fresh.paused = state.paused
        self._advance()

    def close(self, autocommit=True, timeout_ms=None):
        if self._closed:
            return
        if autocommit and self.config["enable_auto_commit"] and self._generation >= 0:
            try:
                self.commit()
            except Errors.KafkaError:
                pass
        revoked = self._revoke_on_close()
        if self._member_id and self._coordinator is not None and self._membership.leaves_on_close():
            self._membership.leave()
            self._sim.run_for(2 * self._network.latency_ms + self._network.jitter_ms)
        self._closed = True
        self.alive = False
        if revoked is not None:  # kafka-python: after its cleanup, as a KafkaError
            raise Errors.KafkaError("User rebalance callback throws an error") from revoked

    def _revoke_on_close(self) -> Exception | None:
        """kafka-python's ConsumerCoordinator._on_close_prepare_async (Java's onLeavePrepare): a
        subscribed consumer's partitions are revoked (lost, if its generation is) before it
        leaves, and its assignment is emptied - a closed consumer has none; seek_to_beginning()
        then raises ValueError. Returns what the listener raised."""
        if not self._subscribed or not self._partitions:
            return None
        held = {TopicPartition(*tp) for tp in self._partitions}
        raised = None
        if self._listener is not None:
            tell = self._listener.on_partitions_lost if self._generation < 0 else self._listener.on_partitions_revoked
            try:
                tell(held)
            except Exception as exc:  # noqa: BLE001 - kafka-python re-raises it after the cleanup
                raised = exc
        self._set_assignment([])
        return raised

    def topics(self):
        self._check_network()  # kafka-python always asks a broker
        return set(self._cluster.controller.configs)

    def partitions_for_topic(self, topic):
        # kafka-python asks a broker (all topics' metadata) only for a topic its metadata lacks:
        # one it has not needed yet (assign() only asks for an update at the next network poll)
        partitions = self._topic_partitions.get(topic)
        if partitions is None:
            self._check_network()
            config = self._cluster.controller.configs.get(topic)
            if config is None:
                return set()
            partitions = self._topic_partitions[topic] = config.partitions
        return set(range(partitions))

    def metrics(self, raw=False):
        """A few of kafka-python's consumer metrics, under its group and metric names (kafka-python
        has many more, as windowed rates; ``raw=True`` gives the same dict here, not its
        ``{MetricName: KafkaMetric}``)."""
        lags = [
            s.highwater - s.position
            for s in self._partitions.values()
            if s.highwater is not None and s.position is not None
        ]
        return {
            "consumer-coordinator-metrics": {"assigned-partitions": float(len(self._partitions))},
            "consumer-fetch-manager-metrics": {"records-lag-max": float(max(lags)) if lags else float("-inf")},
        }

    def bootstrap_connected(self):
        """kafka-python: whether the connection to a bootstrap server is open - it closes once the
        first metadata answer came, and opens lazily: measured False on a fresh consumer and after."""
        return False

    def bootstrap(self, timeout_ms=None, refresh=False):
        """Block until the cluster's metadata is known (KafkaTimeoutError after ``timeout_ms``)."""
        if self._leaders_by_tp and not refresh:
            return
        deadline = self._sim.now + (math.inf if timeout_ms is None else timeout_ms)
        self._refresh_lookup_metadata(deadline)
        if not self._leaders_by_tp and self._sim.now >= deadline:
            raise Errors.KafkaTimeoutError(f"bootstrap did not complete within {timeout_ms} ms")

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        # kafka-python: no auto-commit when the block raised - the record in hand may be unprocessed
        self.close(autocommit=exc_type is None)

    def __iter__(self):
        return self

    def __next__(self):
        if self._closed:
            raise StopIteration("KafkaConsumer closed")
        timeout = self.config["consumer_timeout_ms"]
        deadline = self._sim.now + (timeout if timeout != math.inf else 60_000)
        while self._sim.now < deadline:
            records = self.poll(timeout_ms=min(500, deadline - self._sim.now), max_records=1)
            for batch in records.values():
                return batch[0]
        raise StopIteration

    # ---- simulator-only ------------------------------------------------------------------------
    def crash(self):
        """The application dies: no commit, no LeaveGroup - the coordinator notices only when
        heartbeats stop for ``session_timeout_ms``."""
        self._closed = True
        self.alive = False
        self._cluster.record("nemesis", Nemesis.CRASH_CLIENT, {"client": self.node_id})

    def freeze(self):
        """The application process stops without dying (a long GC pause, SIGSTOP): its heartbeat
        thread stops with it and it polls no more, but it keeps its connections and sends no
        LeaveGroup - the coordinator notices only when heartbeats stop for ``session_timeout_ms``."""
        self._heartbeat_gen += 1  # the scheduled heartbeat sees a newer generation and stops
        self._cluster.record("nemesis", Nemesis.FREEZE_CLIENT, {"client": self.node_id})

    @property
    def positions(self) -> dict:
        return {tp: s.position for tp, s in sorted(self._partitions.items())}

    # ---- the state machine (runs inside simulator events) ------------------------------------------
    def _advance(self, from_poll: bool = False) -> None:
        """Do whatever comes next: join, fetch committed offsets, reset positions, fetch. Called on
        poll and after every response - but (re)joining the group only happens inside poll(), and
        a seek_to_beginning/_end is looked up only inside poll() or position(), as in kafka-python:
        an application busy between polls keeps its old generation, and a seek_to_end skips what
        is written until its next poll. (kafka-python looks an ``auto_offset_reset`` up lazily
        too; the simulator does it as soon as the leader is known - lesson 05b's timelines were
        measured so - but commit() ignores a position found so until the next poll() or
        position(), as kafka-python has none by then: ``_Partition.early``.)"""
        if not self.alive:
            return
        if self._metadata_corr is None and (
            self._vanished or any(self._leaders.get(tp) is None for tp in self._partitions)
        ):
            self._metadata_corr = self._send(self._any_broker(), MetadataRequest(self._next_corr()), self._on_metadata)
        if self._group is not None and self._needs_join and self._subscription:
            # the first join may finish in the background; a member that left the group (poll
            # timeout) waits for the application's next poll(), as kafka-python's does
            if not self._joining and (from_poll or (self._generation < 0 and not self._left_group)):
                self._membership.join()
            return
        unchecked = []
        for tp, state in sorted(self._partitions.items()):
            if state.position is None:
                if self._group is not None and not state.committed_checked and state.reset_to is None:
                    unchecked.append(tp)
                elif not state.resetting and (state.reset_to is None or self._polling or self._in_position):
                    self._reset_offset(tp, state)
            elif state.fetch_offset is not None and state.fetching is None and not state.buffer and not state.paused:
                leader = self._leaders.get(tp)
                if leader is not None and self._needs_validation(tp, state):
                    self._validate_position(tp, state, leader)
                elif leader is not None and not state.validating:
                    corr = self._next_corr()
                    state.fetching = corr
                    self._send(
                        node_name(leader),
                        ConsumerFetchRequest(
                            corr,
                            tp,
                            state.fetch_offset,
                            self._read_committed,
                            self.config["fetch_max_wait_ms"],
                            self.config["max_poll_records"],
                        ),
                        lambda resp, tp=tp: self._on_fetch(tp, resp),
                    )
        if unchecked and not self._fetching_committed:
            self._fetch_committed(unchecked)

    def _positions_looked_up(self) -> None:
        """poll() and position() are where kafka-python looks positions up: the ones the simulator
        found earlier count from now on (see ``_Partition.early``)."""
        for state in self._partitions.values():
            state.early = False

    def _set_assignment(self, tps) -> None:
        self._partitions = {tp: self._partitions.get(tp) or _Partition() for tp in tps}
        for tp in tps:
            self._leaders.setdefault(tp, None)

    # ---- commits -----------------------------------------------------------------------------------
    def _offsets_to_commit(self, offsets) -> dict:
        if offsets is None:
            # kafka-python's all_consumed_offsets: only partitions with a valid position
            return {
                tp: s.position for tp, s in sorted(self._partitions.items()) if s.position is not None and not s.early
            }
        if not isinstance(offsets, dict):
            raise TypeError("offsets must be dict[TopicPartition, OffsetAndMetadata]")
        out = {}
        for tp, meta in offsets.items():
            tp = tuple(tp)
            if self._subscription and tp not in self._partitions and not (self._needs_join or self._joining):
                raise Errors.IllegalStateError(
                    f"cannot commit {tp}: it is not assigned to this consumer (assigned: {sorted(self._partitions)}). "
                    f"Real Kafka would accept it silently and overwrite another member's progress."
                )
            offset = meta.offset if isinstance(meta, OffsetAndMetadata) else meta
            if not isinstance(offset, int) or offset < 0:
                raise ValueError(
                    f"commit offset for {tp} must be an int >= 0 (the NEXT offset to read), got {offset!r}"
                )
            out[tp] = offset
        return out

    # ---- plumbing ----------------------------------------------------------------------------------
    def _on_metadata(self, resp) -> None:
        self._metadata_corr = None
        if isinstance(resp, type):
            return self._later(self._advance)
        self._learn_metadata(resp)
        if self._vanished or any(self._leaders.get(tp) is None for tp in self._partitions):
            return self._later(self._advance)
        self._advance()

    def _learn_metadata(self, resp) -> None:
        self._learn_brokers(resp.brokers)
        self._notice_deleted_topics(resp)
        self._topic_partitions = dict(resp.topics)  # as kafka-python: a deleted topic is forgotten
        self._leaders_by_tp = dict(resp.leaders)
        for tp in self._partitions:
            leader, epoch = resp.leaders.get(tp, (None, -1))
            self._leaders[tp] = leader
            self._leader_epochs[tp] = epoch

    def _notice_deleted_topics(self, resp) -> None:
        """A subscribed topic deleted, or deleted and created again, changes the partitions the
        group assigns: kafka-python's coordinator rejoins when its metadata snapshot of the
        subscription changes (``need_rejoin``), and keeps asking for the metadata of a subscribed
        topic the cluster does not know (a retriable error)."""
        changed = False
        for topic in self._subscription:
            before, now, new_id = self._topic_partitions.get(topic), resp.topics.get(topic), resp.topic_ids.get(topic)
            if before is not None and now is None:
                self._vanished.add(topic)
                changed = True
            elif now is not None and (
                topic in self._vanished or (new_id is not None and self._topic_ids.get(topic, new_id) != new_id)
            ):
                self._vanished.discard(topic)
                changed = True
        self._topic_ids.update(resp.topic_ids)
        if changed and self._group is not None and self._generation >= 0:
            self._needs_join = True

    def _later(self, fn) -> None:
        self._sim.schedule(self.config["retry_backoff_ms"], lambda: self.alive and fn())

    def _wait(self, predicate, timeout_ms) -> bool:
        return self._sim.run_until(predicate, timeout_ms)

    def _check_open(self) -> None:
        if self._closed:
            raise Errors.IllegalStateError("this consumer is closed (or crashed); create a new one")

    def _each_assigned(self, partitions, verb: str) -> list:
        """kafka-python's pause()/resume(): TypeError unless every one is a TopicPartition, then
        KeyError at the first unassigned one (the earlier ones are done by then)."""
        for tp in partitions:
            _check_tp(tp)
        done = []
        for tp in partitions:
            if tp not in self._partitions:
                raise KeyError(f"{verb}({tp}): not assigned to this consumer; assigned: {sorted(self._partitions)}")
            done.append(tp)
        return done

    def _seek_to(self, partitions, where: int) -> None:
        """seek_to_beginning/_end: kafka-python's checks, then a lazy reset of each position."""
        for tp in partitions:
            _check_tp(tp)
        if not partitions:
            partitions = tuple(self._partitions)
            if not partitions:
                raise ValueError("No partitions are currently assigned")
        else:
            for tp in partitions:
                if tp not in self._partitions:
                    raise ValueError(f"Unassigned partition: {tp}")
        for tp in partitions:
            state = self._partitions[tuple(tp)]
            state.position = state.fetch_offset = None
            state.reset_to = where
            state.buffer.clear()
            state.fetching = None
            self._history.record(
                self.node_id,
                INFO,
                OpName.SEEK,
                "beginning" if where == EARLIEST else "end",
                topic=tp[0],
                partition=tp[1],
            )

    def _matching_topics(self, pattern: re.Pattern) -> tuple:
        """The topics a pattern subscription covers now (kafka-python matches every topic the
        metadata lists, internal ones excluded)."""
        return tuple(sorted(t for t in self.topics() if not t.startswith("__") and pattern.match(t)))


def _membership_for(consumer: KafkaConsumer) -> GroupMembership:
    """The membership ``group_protocol`` names; typed, so that mypy checks that the consumer is
    the :class:`~.group_membership.Member` a membership expects."""
    return MEMBERSHIPS[consumer.config["group_protocol"]](consumer)


def _check_tp(partition) -> None:
    if not isinstance(partition, TopicPartition):
        raise TypeError(
            f"partition must be a TopicPartition namedtuple, got {partition!r}: write TopicPartition(topic, partition)"
        )


def _commit_value(offsets: dict) -> list:
    return [[t, p, o] for (t, p), o in sorted(offsets.items())]
