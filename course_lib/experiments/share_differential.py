"""The share-group differential: seeded sequences of what a share-group application does, run
by the same steps on every client x cluster pair, compared by what the application sees.

One topic of one partition (:data:`REPLICATION` replicas, a min ISR of :data:`MIN_ISR`), one
share group (explicit acknowledgement, a delivery limit of :data:`DELIVERY_LIMIT`, a lock of
:data:`LOCK_MS`), members named ``a`` and ``b``. The steps (:meth:`ShareDifferential.steps`):

- ``produce:N`` - N new records, each a batch of its own;
- ``drain:M`` - member M polls until nothing more comes, acknowledges each record as
  :func:`ack_for` draws it from the seed, the record's offset and its delivery count (so how a
  client splits its polls does not matter), and commits after each poll;
- ``hold:M:END`` - one new record; M polls until it holds it, then ENDs the hold: ``accept``,
  ``release``, ``reject`` (acknowledged and committed), ``close`` (M closes holding it; a new M
  comes next time), ``kill`` (M, started for this in a process of its own, is SIGKILLed holding
  it: a crash, its connections close; a new M joins next time, after the dead one), ``freeze``
  (the same, SIGSTOPped: its machine is gone and its connections stay open; ended once the
  record came back), ``expire`` (M keeps it past its lock; the other member drains until it
  comes back, then M acknowledges it late) or ``crash`` (the partition's leader crashes while M
  holds it, as ``crash`` below; then M acknowledges it as a drain would, commits, and drains);
- ``crash`` - between two steps, the share partition's leader broker crashes (SIGKILL: no
  controlled shutdown); once another broker leads the partition the crashed one is restarted
  and back in the ISR (:meth:`ShareSide.crash_leader`; drawn from a random of its own, so the
  other steps are what they were without it). Nothing written is lost (the topic's replicas);
  what the application sees of the failover is in the next steps' observations. With a chance
  of its own, a sequence also has a ``drain:M``, ``hold:M:crash`` pair at a random place;
- the last step is always ``drain:a``: what is left.

Before records are written (``produce``, ``hold``), a member whose last poll brought nothing
leaves (:func:`_quiet`): its client fetches for it in the background, and whether its fetch
or the next poller's takes the new records is a race the machine's speed decides.

Each step gives one observation, a string: a drain's deliveries in order of (offset, delivery)
with the acknowledgement sent and any commit error, a hold's outcome. Sides are a client with a
cluster, each share consumer from the share-group workload's contract
(:func:`course_lib.client_adapters.share_consumer`): :class:`SimulatedShare`, the simulator's
``ShareConsumer`` on its own brokers, in virtual time; :class:`ClientShare`, confluent-kafka's
or the Java client's on the wire cluster or on Kafka. A side keeps the cluster's part (topics,
configs, the leader's crash, assignments, the clock) and no client: its producer and share
consumers are called through :mod:`course_lib.client_adapters.share_sequences` (a step's member
by its name), as every client is called through an adapter. A sequence is replayed as the other
differentials replay theirs, through the call-sequence contract
(:func:`course_lib.client_adapters.call_sequences.replay`: :func:`share_sequence`): each step a
named call on the sequence's members, what it does a function here; what the sequence knows of
its records is data (:class:`_Known`), and what must touch a client in the middle of a step - a
member leaving while it holds a record, ``commit_async`` with its callback - is the adapter's. Kafka's observations of the default seeds
are recorded per client (tests/golden/share_differential_kafka_<client>.json, re-measured by
tests/real/test_share_differential_real.py); every other side is compared with its client's
(the simulator's ShareConsumer with confluent-kafka's), so a share partition broken in the
simulator is found without a Kafka running (tests/test_share_differential.py).

What it found, each now modelled as Kafka and librdkafka do it:

- a poll that found nothing buffered leaves librdkafka fetching after it returned, until records
  come; they wait, acquired and their locks running, for that member's next poll
  (``rkshare_fetch_more_records_requested``) - the simulator fetched only inside a poll;
- an acknowledgement of a record below the share partition's start offset is skipped without an
  error (``SharePartition.acknowledge``: "already archived"), so a late ACCEPT of a record that
  another member took and settled succeeds - the simulator answered INVALID_RECORD_STATE;
- a commit's error is confluent-kafka's ``KafkaException(KafkaError)``, ``name()`` Kafka's name
  of the error - the simulator's carried a class name.

With the Java client as a side: its ``KafkaShareConsumer`` joins the group at its first
``poll()`` (``ShareConsumerImpl.poll`` sends a ``PollEvent``; only then does
``AbstractMembershipManager.onConsumerPoll`` move a subscribed member to JOINING), librdkafka's at
``subscribe``; so a new member polls until it has the partition (what those polls bring its
next poll returns), and the other member of a hold that ends in M leaving or expiring joins
while the record is held, not before it is fetched. After a poll that brought nothing, Java too
fetches on in the background until records come (``ShareConsumeRequestManager.fetchMoreRecords``,
cleared only by a ShareFetch response with acquired records). Kafka with Java showed, sequence by
sequence, what Kafka with confluent-kafka showed; each client has its recording all the same.
A member killed or frozen stays in the group until its session times out: whether every member
has the partition is asked by each member's ``client.id``, not by counting members.

A leader crash between two steps (Kafka 4.4.0, both clients) changed nothing any application saw:
between steps no record is acquired, and the new leader's share partition reads back what the
share coordinator persisted (``SharePartition.initialize`` -> ``ReadShareGroupState``, served by
``ShareCoordinatorShard``): start offset, states and delivery counts, as the simulator's does. When
the crashed broker was the group's coordinator too, the coordinator moves: kafka-python's admin
caches a group's coordinator, so :class:`ClientShare` forgets it on ``NOT_COORDINATOR``.

A leader crash while a member held a record (Kafka 4.4.0, both clients) gave the record back,
available, to the next poll of any member, delivered as if for the first time: an acquisition is
not persisted (``SharePartition`` writes state to the share coordinator on acknowledgement,
release and lock expiry only), so the new leader reads the delivery count of the record's last
persisted state. The holder's acknowledgement after the failover is not applied: its commit
answers NOT_LEADER_FOR_PARTITION with confluent-kafka, ``NotLeaderOrFollowerException`` or
``NetworkException`` with Java (:data:`LEADER_GONE`; before, the Java side named neither). The
simulator's share partition writes no acquisition either: it showed the same. The wire cluster
with confluent-kafka differed in each sequence with this step: librdkafka sends the
acknowledgement to the broker the record came from, and the wire cluster restarts a broker
sooner than librdkafka reconnects (``_TRANSPORT``, one of :data:`LEADER_GONE`); once connected,
the restarted broker, which knows no share session any more, answered SHARE_SESSION_NOT_FOUND
where Kafka answers NOT_LEADER_OR_FOLLOWER for a partition it does not lead (now so:
:func:`course_lib.wire.apis.share_fetch.share_acknowledge`).

``commit_async`` (``hold:M:async``) returns None with both clients; the acknowledgement commit
callback then reports the offset and no error - before the record comes back when it was
released: Kafka reads a connection's next request (the next poll's ShareFetch) only once the
acknowledgement before it is answered. The simulator's share partitions handled the ShareFetch
while the acknowledgement was still being written, and answered it first: the callback had not
run when the released record was polled again. Its brokers now hold a connection's share
requests back behind an acknowledgement in progress (``SharePartitionManager.dispatch``).
"""

from __future__ import annotations

import random
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from ..client_adapters.call_sequences import Action, replay
from ..client_adapters.share_sequences import ShareClients, ShareMembers

#: what each sequence's group is configured with, on every cluster (Kafka's names)
DELIVERY_LIMIT = 3
LOCK_MS = 3000
GROUP_CONFIG = {
    "share.auto.offset.reset": "earliest",
    "share.delivery.count.limit": DELIVERY_LIMIT,
    "share.record.lock.duration.ms": LOCK_MS,
    "share.heartbeat.interval.ms": 1000,
}
#: acknowledgement types by confluent-kafka's names and wire ids
ACKS = {"accept": 1, "release": 2, "reject": 3}
HOLD_ENDS = ("accept", "release", "reject", "close", "expire", "kill", "freeze", "crash", "async")
#: the ends of a hold in which M goes away holding the record, and what they say of it
GONE = {"close": "closed", "kill": "killed", "freeze": "frozen"}
#: each poll waits at most POLL_S seconds; a step gives up after MAX_POLLS polls, saying so
POLL_S = 0.5
MAX_POLLS = 200
#: how many sequences the tests run by default
SEQUENCES = 10
#: the topic's replicas and min ISR: a crashed leader's records are on the other two
REPLICATION, MIN_ISR = 3, 2
#: the chance that a sequence has a leader crash between two of its steps
CRASH_CHANCE = 0.5
#: what a commit after its partition's leader crashed answers: the acknowledgement is not applied.
#: Both clients send it to the broker the record came from. The first is the answer of that broker
#: restarted, a follower now; the second Java's ("the server disconnected before a response was
#: received") for a request that went out on a connection the crash closed; the third
#: librdkafka's when its connection to that broker is not up again yet ("broker not up (state
#: TRY_CONNECT)"). Which one comes is the clock's: Kafka 4.4.0 answered the first to
#: confluent-kafka, the first or second to Java from run to run; the wire cluster, which restarts
#: a broker sooner than librdkafka reconnects, gave confluent-kafka the third
LEADER_GONE = ("NOT_LEADER_FOR_PARTITION", "NETWORK_EXCEPTION", "_TRANSPORT")
#: the chance that a sequence has a hold acknowledged by ``commit_async``
ASYNC_CHANCE = 0.5


def ack_for(seed: int, offset: int, delivery: int) -> str:
    """The acknowledgement a drain sends for this delivery of this record: a function of the
    seed and the delivery, not of which poll brought it.

    >>> ack_for(3, 0, 1) == ack_for(3, 0, 1)
    True
    >>> sorted({ack_for(s, 0, 1) for s in range(40)})
    ['accept', 'reject', 'release']
    """
    return random.Random(f"{seed}:{offset}:{delivery}").choice(("accept", "accept", "release", "reject"))


class ShareSide(Protocol):
    """A client on a cluster, as the differential drives it: the cluster's part here, the client's
    (its producer, its share consumers) in ``clients`` - a client adapter, since what keeps a
    client and calls it is one (:mod:`course_lib.client_adapters.share_sequences`)."""

    name: str
    #: the client whose observations on Kafka this side is held to (a key of
    #: :data:`~course_lib.client_adapters.SHARE_CLIENTS`)
    client: str
    #: the side's producer, and its share consumers (:meth:`ShareClients.members`: subscribed,
    #: explicit acknowledgement; one made ``own_process`` can be killed or frozen)
    clients: ShareClients

    def group(self, config: dict) -> tuple[str, str]:
        """A new topic of one partition and a new share group configured with ``config``."""
        ...

    def assigned(self, group: str, members: ShareMembers) -> bool:
        """Whether each of ``members`` has the partition now."""
        ...

    def crash_leader(self, topic: str) -> None:
        """``topic``'s partition's leader crashes; returns once another broker leads it and the
        crashed one, restarted, is back in its ISR."""
        ...

    def now(self) -> float:
        """Seconds on the side's clock (the simulator's is virtual)."""
        ...

    def close(self) -> None: ...


def _settles(ack: str, delivery: int) -> bool:
    """Whether a record acknowledged with ``ack`` at its ``delivery`` is done with: a release
    before the delivery limit gives it back."""
    return ack != "release" or delivery >= DELIVERY_LIMIT


@dataclass
class _Known:
    """What one sequence knows of its records and members - data only: the members themselves
    are the adapter's (:class:`ShareMembers`), handed to each step by :func:`replay`.

    A drain ends on a state, not a duration: once every record it may get is settled - accepted,
    rejected, or released at its last delivery - and one more poll brings nothing."""

    seed: int
    topic: str
    group: str
    produced: int = 0
    settled: set = field(default_factory=set)
    held: dict = field(default_factory=dict)  # member -> the offset it holds
    #: members whose last poll brought nothing: librdkafka and Java go on fetching for them in
    #: the background until records come (see :func:`_quiet`)
    fetching: set = field(default_factory=set)
    #: what a member's polls brought while it joined: its next :func:`_next_poll` returns them
    joined_with: dict = field(default_factory=dict)

    def unsettled(self, name: str) -> set:
        """What M may still get: neither settled nor held by another member."""
        return set(range(self.produced)) - self.settled - {o for m, o in self.held.items() if m != name}


def _poll(members: ShareMembers, known: _Known, name: str) -> list:
    """One poll of M: its records, and whether it now fetches in the background."""
    messages = members.poll(name, POLL_S)
    if messages:
        known.fetching.discard(name)
    else:
        known.fetching.add(name)
    return messages


def _join(side: ShareSide, members: ShareMembers, known: _Known, name: str, own_process: bool = False) -> None:
    """M, joined: a new M polls until every member has the partition (the Java client joins at
    its first poll, librdkafka at ``subscribe``: both as an application that starts polling);
    what those polls bring is what M's next poll returns."""
    if name in members:
        return
    members.join(name, own_process)
    for _ in range(MAX_POLLS):
        if side.assigned(known.group, members):
            return
        got = _poll(members, known, name)
        known.joined_with.setdefault(name, []).extend(got)
        # it has the partition, and may poll no more before acknowledging them (the coordinator's
        # answer can lag, as after a crash that moved it: seed 6 under load)
        if got:
            return
    raise AssertionError(f"{side.name}: not every member of {known.group} was assigned")


def _next_poll(side: ShareSide, members: ShareMembers, known: _Known, name: str) -> list:
    """M's next poll as the application sees it: M joined first, what its joining brought first."""
    _join(side, members, known, name)
    if known.joined_with.get(name):
        return known.joined_with.pop(name)
    return _poll(members, known, name)


def _quiet(members: ShareMembers, known: _Known) -> None:
    """Before records are written, a member fetching in the background leaves (it holds nothing:
    a drain ends with all it got settled). Its ShareFetch parked at the broker would take the new
    records if it is there when they are appended, and the next step's poller would get them if
    it came between two of those fetches - a race the machine's speed decides (Kafka 4.4.0 under
    load, seed 9: either outcome). Without it, new records wait for the next poll, on every
    cluster. The mechanism itself: tests/test_share_consumer_api.py."""
    for name in sorted(known.fetching):
        members.close(name)
    known.fetching.clear()


def _produce(side: ShareSide, known: _Known, n: int) -> None:
    side.clients.produce(known.topic, [f"job-{known.produced + i}" for i in range(n)])
    known.produced += n


def _drain(side: ShareSide, members: ShareMembers, known: _Known, name: str, wanted: int | None = None) -> list:
    """M polls, acknowledging each record as :func:`ack_for` says and committing after each poll,
    until nothing it may get is unsettled (``wanted``: until that record came) and a poll brought
    nothing: [[offset, delivery, ack]], and a commit's error if one failed."""
    _join(side, members, known, name)
    seen: list = []
    for _ in range(MAX_POLLS):
        messages = _next_poll(side, members, known, name)
        for m in messages:
            offset, delivery = m.offset(), m.delivery_count()
            ack = ack_for(known.seed, offset, delivery)
            members.acknowledge(name, m, ack)
            seen.append([offset, delivery, ack])
            if _settles(ack, delivery):
                known.settled.add(offset)
        if messages:
            outcome = members.commit_sync(name)
            if outcome != "ok":
                seen.append(["commit", outcome])
        elif wanted is None and not known.unsettled(name):
            return sorted(seen, key=str)
        if wanted is not None and any(s[0] == wanted for s in seen) and not messages:
            return sorted(seen, key=str)
    return sorted(seen, key=str) + [["still waiting for", sorted(known.unsettled(name))]]


def _hold(side: ShareSide, members: ShareMembers, known: _Known, name: str, end: str) -> str:
    """One new record, held by M; then ``end`` (see the module docstring)."""
    _quiet(members, known)
    own_process = end in ("kill", "freeze")
    if own_process and name in members:  # M comes back as a process that can die
        members.close(name)  # (it holds nothing: a drain ends with all settled)
    _join(side, members, known, name, own_process)
    other = "b" if name == "a" else "a"
    _produce(side, known, 1)
    offset = known.produced - 1
    held: list = []
    for _ in range(MAX_POLLS):
        held = _next_poll(side, members, known, name)
        if held:
            break
    got = sorted((m.offset(), m.delivery_count()) for m in held)
    if got != [(offset, 1)]:  # anything else was left by an earlier step: say so, settle it
        for m in held:
            members.acknowledge(name, m, "accept")
            known.settled.add(m.offset())
        members.commit_sync(name)
        return f"held {got}"
    acquired = side.now()
    if end == "crash":
        return _crash_holding(side, members, known, name, held[0])
    if end == "async":
        return _commit_async(side, members, known, name, held[0])
    if end in ACKS:
        members.acknowledge(name, held[0], end)
        if _settles(end, 1):
            known.settled.add(offset)
        return f"{end}: {members.commit_sync(name)}"
    known.held[name] = offset
    # the other member joins while M holds the record (a Java member joins at its first poll:
    # there before M's fetch, it would race M for the record). The clock of a record given back
    # by a close or a kill starts then; of one that waits for its lock (expire, freeze) at M's
    # poll, a lock before it can come back - not after the other joined, which takes the Java
    # client a heartbeat or two (Kafka with Java, seed 1, measured from the freeze: "before its
    # lock ran out")
    _join(side, members, known, other)
    if end in GONE:
        members.leave(name, end)
        known.fetching.discard(name)
        if end != "freeze":  # a closed connection gives it back at once: the clock starts now
            acquired = side.now()
    del known.held[name]
    back = _drain(side, members, known, other, wanted=offset)
    when = "before its lock ran out" if side.now() - acquired < LOCK_MS / 2000 else "after its lock ran out"
    if end == "freeze":
        members.end_frozen(name)  # the lost machine's process ends, its record back
    if end in GONE:
        return f"{GONE[end]}; back {when}: {back}"
    members.acknowledge(name, held[0], "accept")
    return f"back {when}: {back}; the late accept: {members.commit_sync(name)}"


def _crash_holding(side: ShareSide, members: ShareMembers, known: _Known, name: str, message: Any) -> str:
    """The partition's leader crashes while M holds ``message``; M then acknowledges it as
    :func:`ack_for` draws it and commits, and drains what comes back."""
    side.crash_leader(known.topic)
    offset = message.offset()
    ack = ack_for(known.seed, offset, message.delivery_count())
    members.acknowledge(name, message, ack)
    outcome = members.commit_sync(name)
    if outcome == "ok" and _settles(ack, message.delivery_count()):
        known.settled.add(offset)
    if outcome in LEADER_GONE:
        outcome = "the leader is gone"
    return f"crashed; the {ack}: {outcome}; then: {_drain(side, members, known, name)}"


def _commit_async(side: ShareSide, members: ShareMembers, known: _Known, name: str, message: Any) -> str:
    """M acknowledges ``message`` as :func:`ack_for` draws it and commits with ``commit_async``:
    what it returns, then what the acknowledgement commit callback reports (each call's offsets
    and error per partition), polling until it has reported or a poll brought records; those,
    and more, M drains."""
    offset, delivery = message.offset(), message.delivery_count()
    ack = ack_for(known.seed, offset, delivery)

    def polled() -> bool:
        got = _poll(members, known, name)
        if got:  # a record released comes back: unacknowledged, no poll may follow; the drain's
            known.joined_with[name] = got
        return bool(got)

    returned, reports = members.commit_async(name, message, ack, polled, MAX_POLLS)
    if reports == [[[[offset], "ok"]]] and _settles(ack, delivery):
        known.settled.add(offset)
    return f"async {ack}: returned {returned}; reported {reports}; then: {_drain(side, members, known, name)}"


def _step(side: ShareSide, known: _Known, step: str) -> Action:
    """What ``step`` does to the sequence's members (the module docstring): a drain's or a hold's
    observation; a write and a leader's crash observe nothing (None)."""
    kind, _, arg = step.partition(":")
    if kind == "produce":

        def produce(members: ShareMembers) -> None:
            _quiet(members, known)
            _produce(side, known, int(arg))

        return produce
    if kind == "crash":
        return lambda _members: side.crash_leader(known.topic)
    if kind == "drain":
        return lambda members: _drain(side, members, known, arg)
    name, end = arg.split(":")
    return lambda members: _hold(side, members, known, name, end)


def _observed(step: str, make: Callable[[], Any]) -> str:
    """``step -> what the application saw``; "" for a step that observes nothing. What a step
    raises is no observation: it ends the sequence, as a broken side should."""
    seen = make()
    return "" if seen is None else f"{step} -> {seen}"


def share_sequence(side: ShareSide, seed: int) -> list[str]:
    """The observations of ``seed``'s sequence (:meth:`ShareDifferential.steps`) on ``side``:
    its steps replayed on the side's members through the call-sequence contract (a step is a
    named call; the members, called by name, are the client), a line per step that observes."""
    topic, group = side.group(GROUP_CONFIG)
    known = _Known(seed, topic, group)
    members = side.clients.members(topic, group)
    plan = ShareDifferential.steps(seed)
    try:
        outcomes = replay(members, plan, {step: _step(side, known, step) for step in plan}, outcome=_observed)
    finally:
        members.close_all()
    return [said for said in outcomes if said]


class ShareDifferential:
    """Runs seeded sequences on a side; compares them with Kafka's recorded observations."""

    def __init__(self, side: ShareSide):
        self.side = side

    @staticmethod
    def kinds(seed: int) -> set[str]:
        """The kinds of step the seed's sequence takes: each step's verb, a hold's with its end.

        >>> sorted(ShareDifferential.kinds(4)), ShareDifferential.steps(4)[:2]
        (['drain', 'produce'], ('produce:1', 'produce:2'))
        """
        return {
            step.split(":")[0] + (":" + step.split(":")[-1] if step.startswith("hold") else "")
            for step in ShareDifferential.steps(seed)
        }

    @staticmethod
    def covering(seeds) -> list[int]:
        """A few of ``seeds`` that between them take every kind of step all of them take (greedy:
        the seed with the most kinds not yet taken, first): what a run that can only afford a
        sample of the sequences - Kafka's, in ``make test`` - still exercises.

        >>> seeds = range(SEQUENCES)
        >>> set().union(*map(ShareDifferential.kinds, ShareDifferential.covering(seeds))) == set().union(*map(ShareDifferential.kinds, seeds))
        True
        >>> len(ShareDifferential.covering(seeds)) < SEQUENCES
        True
        """
        left, chosen = set().union(*map(ShareDifferential.kinds, seeds)), []
        while left:
            best = max(seeds, key=lambda s: len(ShareDifferential.kinds(s) & left))
            chosen.append(best)
            left -= ShareDifferential.kinds(best)
        return chosen

    @staticmethod
    def steps(seed: int) -> tuple[str, ...]:
        """The seed's sequence (see the module docstring).

        >>> ShareDifferential.steps(5) == ShareDifferential.steps(5)
        True
        >>> ShareDifferential.steps(5)[-1]
        'drain:a'
        """
        rng = random.Random(seed)
        steps = [f"produce:{rng.randint(1, 3)}"]
        available = True  # records nobody settled: a hold drains them first, so it holds just its own
        for _ in range(rng.randint(2, 4)):
            kind, member = rng.choice(("produce", "drain", "hold", "hold")), rng.choice("ab")
            if kind == "produce":
                steps.append(f"produce:{rng.randint(1, 3)}")
                available = True
                continue
            if kind == "hold" and available:
                steps.append(f"drain:{member}")
            if kind == "drain":
                steps.append(f"drain:{member}")
                available = False
                continue
            end = rng.choice(("accept", "release", "reject", "leave", "expire"))
            if end == "leave":  # M goes away holding it: closes, dies, or its machine is lost
                end = rng.choice(tuple(GONE))
            steps.append(f"hold:{member}:{end}")
            available = end == "release"
        # a leader crash, drawn from a random of its own: the other steps stay what they were
        crash = random.Random(f"{seed}:crash")
        if crash.random() < CRASH_CHANCE:
            steps.insert(crash.randint(1, len(steps)), "crash")
        # and one while a member holds a record, from a random of its own too; the drain before
        # it settles what is there, so the hold holds just its own record
        for end, chance in (("crash", CRASH_CHANCE), ("async", ASYNC_CHANCE)):
            more = random.Random(f"{seed}:held {end}")
            if more.random() < chance:
                at, member = more.randint(1, len(steps)), more.choice("ab")
                steps[at:at] = [f"drain:{member}", f"hold:{member}:{end}"]
        return (*steps, "drain:a")

    def run(self, seed: int) -> list[str]:
        """The observations of one sequence: ``step -> what the application saw``, a line each."""
        return share_sequence(self.side, seed)

    def differences(self, seeds: range | list[int], expected: dict[str, list[str]]) -> list[str]:
        """Each sequence whose observations differ from ``expected`` (seed -> observations), with
        the seed, its steps and the first step that differs."""
        found = []
        for seed in seeds:
            got, want = self.run(seed), expected[str(seed)]
            if got != want:
                first = next((i for i, (g, w) in enumerate(zip(got, want)) if g != w), min(len(got), len(want)))
                found.append(
                    f"seed {seed} {list(self.steps(seed))}: step {first}: {self.side.name} "
                    f"{got[first] if first < len(got) else '-'!r}, Kafka {want[first] if first < len(want) else '-'!r}"
                )
        return found


# ---- the sides ---------------------------------------------------------------------------------
def _wait_for(done: Any, what: str, timeout_s: float) -> None:
    """Until ``done()`` (an error while the metadata moves is a no); AssertionError after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if done():
                return
        except Exception:  # the controller's view, briefly unavailable during an election
            pass
        time.sleep(0.05)
    raise AssertionError(f"no {what} within {timeout_s} s")


class SimulatedShare:
    """The simulator's ShareConsumer on the simulator's brokers (3, as the lab), virtual time."""

    name = "simulator"
    #: the simulator's ShareConsumer is confluent-kafka's, librdkafka's fetching included
    client = "confluent-kafka"

    def __init__(self, seed: int = 0):
        from ..broker import Cluster
        from ..clients import KafkaProducer

        self.cluster = Cluster(brokers=3, seed=seed)
        # the simulator's share consumers die in virtual time, in this process (``crash``)
        self.clients = ShareClients("simulator", self.cluster, KafkaProducer(bootstrap_servers=self.cluster))

    def group(self, config: dict) -> tuple[str, str]:
        topic, group = f"share-diff-{uuid.uuid4().hex[:8]}", f"share-diff-{uuid.uuid4().hex[:8]}"
        self.cluster.create_topic(topic, partitions=1, replication_factor=REPLICATION, min_insync_replicas=MIN_ISR)
        self.cluster.alter_share_group_config(group, dict(config))
        return topic, group

    def now(self) -> float:
        return self.cluster.sim.now / 1000

    def assigned(self, group: str, members: ShareMembers) -> bool:
        return members.all_assigned()

    def crash_leader(self, topic: str) -> None:
        cluster = self.cluster
        old = cluster.leader_of(topic, 0)
        assert old is not None, f"{topic} has a leader until the crash"
        cluster.crash(old)
        if not cluster.run_until(lambda: cluster.leader_of(topic, 0) not in (None, old), 60_000):
            raise AssertionError(f"simulator: {topic} got no new leader after broker {old} crashed")
        cluster.restart(old)
        if not cluster.run_until(lambda: old in cluster.inspect(topic, 0).isr, 60_000):
            raise AssertionError(f"simulator: broker {old}, restarted, did not rejoin {topic}'s ISR")

    def close(self) -> None:
        self.clients.close()


def _describe_request(group: str) -> Any:
    """ShareGroupDescribe for ``group`` (its schema is the wire package's)."""
    from ..wire.apis.schemas import ShareGroupDescribeRequest

    return ShareGroupDescribeRequest(group_ids=[group], include_authorized_operations=False)


class ClientShare:
    """A client of the share-group workload on a wall-clock cluster (``bootstrap_servers``,
    ``create_topic``): the wire cluster or Kafka, with any client of
    :data:`~course_lib.client_adapters.SHARE_CLIENTS` but the simulator's. Its share consumers
    come from the workload's contract (:func:`~course_lib.client_adapters.share_consumer`, through
    :class:`~course_lib.client_adapters.share_sequences.ShareClients`), its
    records from the client's producer (the producer contract composed with the cluster, as a
    scenario's: :class:`~course_lib.backend.ComposedBackend`), the group's configs from an
    operator's admin (:func:`course_lib.experiments.share_group_experiments.configure_with_admin`). Whether a
    member has its partition is asked of the group coordinator
    (:class:`~course_lib.client_adapters.for_kafka_python.ShareGroupAssignments`: no client's
    consumer shows it the same way)."""

    def __init__(self, cluster: Any, client: str, name: str | None = None):
        from ..backend import ComposedBackend
        from ..client_adapters import CLIENTS
        from ..client_adapters.for_kafka_python import ShareGroupAssignments

        self.cluster, self.client, self.name = cluster, client, name or client
        self.servers = cluster.bootstrap_servers
        self.backend = ComposedBackend(cluster, CLIENTS[client]())
        # the backend closes the producer (close_clients); each member gets a ``client.id`` of
        # its own (ShareMembers.client_ids)
        self.clients = ShareClients(client, self.servers, self.backend.producer())
        self.assignments = ShareGroupAssignments(self.servers, _describe_request)

    def group(self, config: dict) -> tuple[str, str]:
        from .share_group_experiments import configure_with_admin

        topic = self.cluster.create_topic(
            f"share-diff-{uuid.uuid4().hex[:8]}",
            partitions=1,
            replication_factor=REPLICATION,
            min_insync_replicas=MIN_ISR,
        )
        group = f"share-diff-{uuid.uuid4().hex[:8]}"
        configure_with_admin(self.servers, group, config)
        return topic, group

    def now(self) -> float:
        return time.monotonic()

    def assigned(self, group: str, members: ShareMembers) -> bool:
        # by ``client.id``: a killed member stays in the group until its session times out, so
        # counting assigned members would count it
        return members.client_ids() <= self.assignments.client_ids(group)

    def crash_leader(self, topic: str, timeout_s: float = 60.0) -> None:
        """The cluster's own broker faults (``crash``, ``restart``: the wire cluster's nemesis,
        Kafka's processes); its controller's view (``leader_of``, ``isr_of``) says when each is done."""
        cluster = self.cluster
        old = cluster.leader_of(topic, 0)
        assert old >= 0, f"{topic} has a leader until the crash"
        cluster.crash(old)
        _wait_for(lambda: cluster.leader_of(topic, 0) not in (-1, old), f"a new leader of {topic}", timeout_s)
        cluster.restart(old, timeout_s)
        _wait_for(lambda: old in cluster.isr_of(topic, 0), f"broker {old} back in {topic}'s ISR", timeout_s)

    def close(self) -> None:
        self.backend.close_clients()
        self.assignments.close()
