"""KIP-848 experiments shared by the wire cluster's tests and Kafka 4.3.1's (tests/real), and by
the protocol matrix of notebook 09 (:mod:`course_lib.experiments.protocol_matrix`): a member with
``group.protocol=consumer`` joins a 4-partition topic, a second joins, the first leaves - what
each member owns at each step; a member crashes; a handler is slower than
``max.poll.interval.ms``. Both clusters and both clients (the Java client, librdkafka) must give
the same observations, and the simulator's own ``group_protocol="consumer"`` consumer the same
counts (:func:`on_the_simulator`)."""

from __future__ import annotations

import time
import uuid
from typing import Callable, TypedDict

from course_lib.client_adapters import group_member
from course_lib.client_adapters.members import GroupMember
from course_lib.experiments.registry import experiment, family, measured
from course_lib.judge.result import Result

#: what Kafka 4.3.1 and the wire cluster both give: all four, then two and two, then all four
EXPECTED = {"first": [0, 1, 2, 3], "split": [2, 2], "union": [0, 1, 2, 3], "after_leave": [0, 1, 2, 3]}


#: the settings of every member of these experiments (Java's names: the group-member contract's)
MEMBER_CONFIG = {"group.protocol": "consumer", "auto.offset.reset": "earliest", "enable.auto.commit": False}
#: the settings given to :func:`member` over :data:`MEMBER_CONFIG` (a TypedDict: mypy then sees
#: that none of them is one of member()'s own parameters)
MemberSettings = TypedDict("MemberSettings", {"group.protocol": str, "max.poll.interval.ms": int}, total=False)


def member(client: str, servers, group: str, topics: list[str], own_process: bool = False, **config) -> GroupMember:
    """A KIP-848 member of ``client`` (:data:`course_lib.client_adapters.GROUP_CLIENTS`) in
    ``group``, subscribed to ``topics`` on ``servers`` (the simulator's: its ``Cluster``)."""
    settings = {**MEMBER_CONFIG, "bootstrap.servers": servers, "group.id": group, **config}
    return group_member(client, settings, topics, own_process)


def join_split_leave(client: str, servers, topic: str, timeout_s: float = 60, **config) -> dict:
    """a joins ``topic`` (4 partitions) and owns all four, b joins and they split, a leaves and b
    owns all four: what each owned at each step (:data:`EXPECTED`), and how long the moves took.
    ``config``: the members' settings over :data:`MEMBER_CONFIG` (``**{"group.protocol":
    "classic"}``: the same moves with the classic protocol's rebalances)."""
    protocol = config.get("group.protocol", MEMBER_CONFIG["group.protocol"])
    group = f"{'kip848' if protocol == 'consumer' else protocol}-{client}-{uuid.uuid4().hex[:8]}"
    a = member(client, servers, group, [topic], **config)
    a_left = False
    b = None
    try:
        _until([a], lambda: a.owned() == [0, 1, 2, 3], timeout_s, "a owns every partition")
        first = a.owned()
        b = member(client, servers, group, [topic], **config)
        moved_s = _until([a, b], lambda: len(a.owned()) == 2 and len(b.owned()) == 2, timeout_s, "a and b split")
        split = [len(a.owned()), len(b.owned())]
        union = sorted(a.owned() + b.owned())
        a.close()
        a_left = True
        left_s = _until([b], lambda: b.owned() == [0, 1, 2, 3], timeout_s, "b owns every partition")
        return {
            "first": first,
            "split": split,
            "union": union,
            "after_leave": b.owned(),
            "seconds": {"join_moved": moved_s, "leave_moved": left_s},
        }
    finally:
        if not a_left:
            a.close()
        if b is not None:
            b.close()


# ---- a crashed member and a slow handler (KIP-848) ----------------------------------------------
#: 5 records in each of the 4 partitions, produced once both members own two partitions each
PER_PARTITION = 5
#: what both clusters give, for both clients. Crash: b's partitions go to a, which reads them again
#: from the start (nothing was committed): 10 records processed twice. Slow handler: a stops
#: polling past max.poll.interval.ms, leaves; b reads a's partitions again (10 twice); a's next
#: poll rejoins, gets two partitions back and reads them again (10 more twice).
CRASH_EXPECTED = {"split": [2, 2], "after": [0, 1, 2, 3], "seen": {"a": 20, "b": 10}, "twice": 10}
SLOW_EXPECTED = {
    "split": [2, 2],
    "b_while_a_slow": [0, 1, 2, 3],
    "split_again": [2, 2],
    "seen": {"a": 20, "b": 20},
    "twice": 20,
}
#: the Java members' epochs (groupMetadata().generationId) at each point, the same on both
#: clusters: a new group is at epoch 1 (Kafka 4.3's KAFKA-20268, course_lib/broker/consumer_group),
#: so a alone has 2; b joins (3), b crashes (4) / a leaves (4 for b), a rejoins (5). A member that
#: left after max.poll.interval.ms still shows its last epoch (3): groupMetadata() follows only
#: epochs above 0 (``AbstractMembershipManager.updateMemberEpoch``); the simulated consumer too
JAVA_CRASH_EPOCHS = {"a_alone": 2, "a_split": 3, "a_after": 4}
JAVA_SLOW_EPOCHS = {"a_alone": 2, "b_split": 3, "a_left": 3, "b_while_a_slow": 4, "a_back": 5, "b_back": 5}


def _until(members, condition: Callable[[], bool], timeout_s: float, what: str) -> float:
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout_s:
            raise AssertionError(f"{what}: not within {timeout_s} s: {[(m.owned(), m.seen) for m in members]}")
        for m in members:
            m.poll()
    return time.monotonic() - start


class GroupMembers:
    """The members of one new consumer group, :attr:`group`: ``members(name)`` -> a subscribed
    group member (``member(group, name)`` makes it); :meth:`regroup`: from now on, another new
    group."""

    def __init__(self, member: Callable[[str, str], GroupMember], prefix: str):
        self.member, self.prefix = member, prefix
        self.regroup()

    def __call__(self, name: str) -> GroupMember:
        return self.member(self.group, name)

    def regroup(self) -> None:
        self.group = f"{self.prefix}-{uuid.uuid4().hex[:8]}"


#: how many new groups :func:`_join_then_split` tries when the topic reached the coordinator late
GROUP_ATTEMPTS = 3


def _alone(make: Callable, timeout_s: float) -> tuple:
    """a joins and owns every partition: (a, a's epoch then, whether a went through another epoch first).

    Why the last: a KRaft broker answers Metadata with a new topic before its group coordinator
    applies the same metadata image (``CoordinatorRuntime.onNewMetadataImage`` queues an event per
    coordinator). A member that joins in between gets an empty assignment at one epoch, and the
    topic's arrival costs the group one more: a alone at 3, not 2 (seen on Kafka 4.3.1 under load)."""
    a = make("a")
    epochs: set = set()

    def owns_all() -> bool:
        epochs.add(a.epoch())
        return a.owned() == [0, 1, 2, 3]

    try:
        _until([a], owns_all, timeout_s, "a owns every partition")
        alone = a.epoch()
    except BaseException:
        a.close()
        raise
    return a, alone, len(epochs - {None, 0, -1}) > 1


def _join_then_split(make: Callable, timeout_s: float) -> tuple:
    """a joins and owns every partition, then b joins and they split: (a, b, [2, 2], a's epoch alone).
    If the topic reached the group coordinator after a joined (see :func:`_alone`), a group
    made by :class:`GroupMembers` starts again as a new group: the experiment counts rebalances,
    not a topic's creation."""
    for _ in range(GROUP_ATTEMPTS - 1):
        a, alone, topic_late = _alone(make, timeout_s)
        if not (topic_late and isinstance(make, GroupMembers)):
            break
        a.close()
        make.regroup()
    else:
        a, alone, _ = _alone(make, timeout_s)
    try:
        b = make("b")
    except BaseException:
        a.close()
        raise
    try:
        _until([a, b], lambda: len(a.owned()) == 2 and len(b.owned()) == 2, timeout_s, "a and b split")
    except BaseException:
        a.close()
        b.close()
        raise
    return a, b, [len(a.owned()), len(b.owned())], alone


@experiment("consumer protocol", "consumer protocol", name="crashed member")
def crashed_member(make: Callable, produce: Callable, timeout_s: float = 120) -> Result:
    """``make(name)`` -> a subscribed member (b one that can die: ``own_process``); ``produce(n)``
    writes n records to every partition."""
    a, b, split, alone = _join_then_split(make, timeout_s)
    try:
        out: dict = {"split": split}
        epochs = {"a_alone": alone, "a_split": a.epoch()}
        produce(PER_PARTITION)
        _until([a, b], lambda: a.seen == b.seen == 2 * PER_PARTITION, timeout_s, "each reads its partitions")
        b.kill()
        seconds = _until([a], lambda: a.owned() == [0, 1, 2, 3] and a.seen == 4 * PER_PARTITION, timeout_s, "a")
        epochs["a_after"] = a.epoch()
        out |= {"after": a.owned(), "seen": {"a": a.seen, "b": b.seen}, "twice": a.seen + b.seen - 4 * PER_PARTITION}
        return measured(crashed_member, {**out, "epochs": epochs, "seconds": seconds})
    finally:
        a.close()
        b.close()


@experiment("consumer protocol", "consumer protocol", name="slow handler")
def slow_handler(make: Callable, produce: Callable, max_poll_s: float, timeout_s: float = 120) -> Result:
    """``make(name)`` members with ``max.poll.interval.ms`` = ``max_poll_s``; a stops polling."""
    a, b, split, alone = _join_then_split(make, timeout_s)
    try:
        out: dict = {"split": split}
        epochs = {"a_alone": alone, "b_split": b.epoch()}
        produce(PER_PARTITION)
        _until([a, b], lambda: a.seen == b.seen == 2 * PER_PARTITION, timeout_s, "each reads its partitions")
        # a's handler is slow: b alone polls; a leaves after max_poll_s and b gets (and rereads) a's partitions
        moved_s = _until(
            [b], lambda: b.owned() == [0, 1, 2, 3] and b.seen == 4 * PER_PARTITION, timeout_s, "b takes a's"
        )
        out["b_while_a_slow"] = b.owned()
        epochs |= {"a_left": a.epoch(), "b_while_a_slow": b.epoch()}
        # a's handler returns: its next poll rejoins, and it reads the partitions it gets back again
        out["split_again"] = _split_again(a, b, timeout_s)
        _until([a, b], lambda: a.seen == 4 * PER_PARTITION, timeout_s, "a rereads what it got back")
        epochs |= {"a_back": a.epoch(), "b_back": b.epoch()}
        out |= {"seen": {"a": a.seen, "b": b.seen}, "twice": a.seen + b.seen - 4 * PER_PARTITION}
        return measured(slow_handler, {**out, "epochs": epochs, "seconds": moved_s + max_poll_s})
    finally:
        a.close()
        b.close()


def _split_again(a, b, timeout_s) -> list:
    _until([a, b], lambda: len(a.owned()) == 2 and len(b.owned()) == 2, timeout_s, "a back, split again")
    return [len(a.owned()), len(b.owned())]


def producer(servers: str, topic: str) -> Callable:
    def produce(n: int) -> None:
        from confluent_kafka import Producer

        p = Producer({"bootstrap.servers": servers, "acks": "all"})
        for part in range(4):
            for _ in range(n):
                p.produce(topic, b"v", partition=part)
        assert p.flush(30) == 0, "records left unsent"

    return produce


def members(client: str, servers, topic: str, crash_b: bool = False, **config) -> GroupMembers:
    """New groups of ``client``'s members of ``topic``; with ``crash_b``, b can die (``kill()``)."""
    return GroupMembers(
        lambda group, name: member(client, servers, group, [topic], crash_b and name == "b", **config),
        f"kip848-{client}",
    )


def check(got: dict, expected: dict, java_epochs: dict | None = None) -> list[str]:
    """What differs in ``got`` (a run's numbers) from the observations both clusters must give
    (the member epochs for the Java client only: librdkafka does not show them): [] when nothing does."""
    got = dict(got)
    epochs = got.pop("epochs")
    got.pop("seconds")
    wrong = [] if got == expected else [f"observed {got}, expected {expected}"]
    if java_epochs is not None and epochs != java_epochs:
        wrong.append(f"member epochs {epochs}, expected {java_epochs}")
    return wrong


# ---- the first member epochs of a new group (Java: groupMetadata().generationId) ----------------
#: what both clusters give (measured on Kafka 4.3.1): a new group is at epoch 1, so its first
#: member is at 2 whatever it subscribes to; a topic created after the join is a metadata change
#: (+1, at the member's next heartbeat); an emptied group keeps its epoch (a left: 3, the next
#: member joins: 4); two members joining at once end at 3 and 3 - and with assignment batching
#: (``group.consumer.assignment.interval.ms``, 1 s) the second first reconciles to the target of
#: epoch 2, where it has nothing, at member epoch 2, until a heartbeat computes epoch 3's
FIRST_EPOCHS = {
    "topic_first": 2,
    "two_topics": 2,
    "topic_later": {"before": 2, "after": 3},
    "rejoin_empty": 4,
    "two_at_once": [3, 3],
    "second_joiner_first": 2,
}


def _trail(members: list, condition: Callable[[], bool], timeout_s: float, trail: list) -> None:
    """Poll ``members`` until ``condition()``; ``trail`` gets each new (epochs, owned counts)."""
    start = time.monotonic()
    while True:
        for m in members:
            m.poll()
        now = ([m.epoch() for m in members], [len(m.owned()) for m in members])
        if not trail or trail[-1] != now:
            trail.append(now)
        if condition():
            return
        if time.monotonic() - start > timeout_s:
            raise AssertionError(f"not within {timeout_s} s: {trail}")


def first_epochs(cluster, client: str = "java", timeout_s: float = 60) -> dict:
    """On ``cluster`` (a wire cluster or Kafka's: ``create_topic``, ``topic``), each variant's
    member epochs (:data:`FIRST_EPOCHS`) with ``client``'s members (one that shows its epoch) and,
    under "trails", what the members went through.
    (On Kafka ``create_topic`` returns once every broker knows the topic, course_lib/real/
    broker_metadata.py; its group coordinator may still apply the topic a moment later, and a
    member alone then starts again in a new group: :func:`_alone`.)"""
    servers = cluster.bootstrap_servers

    def make_topic(name: str, partitions: int) -> str:
        return cluster.create_topic(name, partitions=partitions)

    run = uuid.uuid4().hex[:8]
    out: dict = {}
    trails: dict = {}

    def joiner(group: str, topics: list) -> GroupMember:
        # subscribing to a topic that does not exist must not create it (topic_later)
        return member(client, servers, f"kip848-first-{run}-{group}", topics, **{"allow.auto.create.topics": False})

    def alone(name: str, topics: list, group: str | None = None) -> tuple[int, str]:
        """(the epoch at which one member of ``group`` owns 4 partitions, the group); a new group
        when a new topic reached the coordinator after the member joined (see :func:`_alone`)."""
        for attempt in range(GROUP_ATTEMPTS):
            used = group or f"{name}-{attempt}"
            m = joiner(used, topics)
            trails[name] = []
            try:
                _trail([m], lambda: len(m.owned()) == 4, timeout_s, trails[name])
            finally:
                m.close()
            if group or len({epochs[0] for epochs, _ in trails[name]} - {0, -1}) == 1:
                break
        return trails[name][-1][0][0], used

    t = make_topic(f"kip848-first-{run}", 4)
    out["topic_first"], first_group = alone("topic_first", [t])
    out["rejoin_empty"], _ = alone("rejoin_empty", [t], group=first_group)  # the group a left
    halves = [make_topic(f"kip848-first-{run}-{i}", 2) for i in (0, 1)]
    out["two_topics"], _ = alone("two_topics", halves)
    later = f"kip848-first-{run}-later"
    m = joiner("topic_later", [cluster.topic(later)])
    trails["topic_later"] = []

    def joined() -> bool:
        epoch = m.epoch()
        assert epoch is not None, f"{client}'s members do not show their epoch"
        return epoch > 0

    try:
        _trail([m], joined, timeout_s, trails["topic_later"])
        deadline = time.monotonic() + 3  # joined on a topic that does not exist: nothing to own
        while time.monotonic() < deadline:
            m.poll()
        before = m.epoch()
        make_topic(later, 4)
        _trail([m], lambda: len(m.owned()) == 4, timeout_s, trails["topic_later"])
        out["topic_later"] = {"before": before, "after": m.epoch()}
    finally:
        m.close()
    a, b = joiner("two_at_once", [t]), joiner("two_at_once", [t])
    trails["two_at_once"] = []
    try:
        _trail(
            [a, b],
            lambda: len(a.owned()) == len(b.owned()) == 2 and a.epoch() == b.epoch(),
            timeout_s,
            trails["two_at_once"],
        )
        out["two_at_once"] = [a.epoch(), b.epoch()]
        out["second_joiner_first"] = next(epochs[1] for epochs, _ in trails["two_at_once"] if epochs[1] > 0)
    finally:
        a.close()
        b.close()
    return {**out, "trails": trails}


# ---- one experiment on one cluster, as the protocol matrix runs it ------------------------------
#: the crash and slow-handler experiments, by the name the protocol matrix gives them
EXPERIMENTS = tuple(family("consumer protocol"))


class WireSettings(TypedDict, total=False):
    """The :class:`~course_lib.wire.cluster.WireCluster` keywords of :data:`WIRE_SETTINGS`."""

    brokers: int
    seed: int
    group_initial_rebalance_delay_ms: int
    group_consumer_session_timeout_ms: int


#: the wire cluster each experiment runs on: a 6 s consumer-group session (Kafka's is 45 s, also
#: its minimum: assignments, epochs and counts are the same, the wait shorter)
WIRE_SETTINGS: dict[str, WireSettings] = {
    "crashed member": {
        "brokers": 3,
        "seed": 1,
        "group_initial_rebalance_delay_ms": 0,
        "group_consumer_session_timeout_ms": 6000,
    },
    # librdkafka's member past max.poll.interval.ms stops heartbeating without leaving (on Kafka
    # too): b gets its partitions after the session timeout
    "slow handler": {
        "brokers": 3,
        "seed": 1,
        "group_initial_rebalance_delay_ms": 0,
        "group_consumer_session_timeout_ms": 6000,
    },
}
#: the slow handler's max.poll.interval.ms, in seconds
MAX_POLL_S = 5


def _check_experiment(experiment: str) -> None:
    if experiment not in EXPERIMENTS:
        raise ValueError(f"unknown KIP-848 experiment {experiment!r}: one of {', '.join(EXPERIMENTS)}")


def run_on(experiment: str, client: str, cluster) -> Result:
    """``experiment`` with ``client``'s members (a key of
    :data:`~course_lib.client_adapters.GROUP_CLIENTS` but the simulator's:
    :func:`on_the_simulator`) on ``cluster`` (a started WireCluster or a LocalCluster:
    ``bootstrap_servers``, ``create_topic``), on a new topic and group."""
    _check_experiment(experiment)
    servers = cluster.bootstrap_servers
    topic = cluster.create_topic(f"kip848-{uuid.uuid4().hex[:8]}", partitions=4)
    crash = experiment == "crashed member"
    make = members(
        client, servers, topic, crash_b=crash, **({} if crash else {"max.poll.interval.ms": MAX_POLL_S * 1000})
    )
    if crash:
        return crashed_member(make, producer(servers, topic))
    return slow_handler(make, producer(servers, topic), MAX_POLL_S)


def on_the_wire(experiment: str, client: str) -> Result:
    """:func:`run_on` on a WireCluster of :data:`WIRE_SETTINGS`, started and stopped here."""
    from course_lib.wire.cluster import WireCluster

    _check_experiment(experiment)
    with WireCluster(**WIRE_SETTINGS[experiment]) as wire:
        return run_on(experiment, client, wire)


def on_the_simulator(experiment: str, seed: int = 1) -> Result:
    """``experiment`` with the simulator's own consumer (``group_protocol="consumer"``) on a
    seeded simulated cluster, in virtual time (Kafka's 45 s session: virtual seconds).

    >>> got = on_the_simulator("crashed member").numbers
    >>> got["twice"], got["seen"]
    (10, {'a': 20, 'b': 10})
    """
    from course_lib.broker import Cluster
    from course_lib.clients import KafkaProducer

    _check_experiment(experiment)
    cluster = Cluster(3, seed=seed, group_initial_rebalance_delay_ms=0)
    cluster.create_topic("t", partitions=4)

    def produce(n: int) -> None:
        p = KafkaProducer(bootstrap_servers=cluster, acks="all")
        for part in range(4):
            for _ in range(n):
                p.send("t", b"v", partition=part)
        p.flush()
        p.close()

    if experiment == "crashed member":
        return crashed_member(lambda name: member("simulator", cluster, "kip848-sim", ["t"]), produce)
    config: MemberSettings = {"max.poll.interval.ms": MAX_POLL_S * 1000}
    return slow_handler(lambda name: member("simulator", cluster, "kip848-sim", ["t"], **config), produce, MAX_POLL_S)
