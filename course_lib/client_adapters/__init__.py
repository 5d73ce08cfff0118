"""The client side of the seam: how a backend builds and calls the learner's applications.

A backend is a client adapter composed with a cluster (:mod:`course_lib.clusters`):
:class:`~course_lib.backends.composed.ComposedBackend` runs any :class:`ClientSide` against any
wall-clock cluster (:class:`~course_lib.clusters.Topology`); the simulator's own clients live
with the simulated cluster in :class:`~course_lib.backends.sim.SimBackend` (one process, one
virtual clock).

Adding a client (librdkafka through confluent-kafka, a Java client...) is ONE module here, one
class with these members - the contract:

- ``name``: how results and messages name the client ("kafka-python");
- ``producer(backend, process, config)`` / ``consumer(backend, process, topics, config)``: a
  client with kafka-python's API (``send`` returning a future, ``flush``, the transaction calls,
  ``poll``, ``commit``, ``position``, ``close``) that records every call in ``backend.history``
  with the operation names of :mod:`course_lib.history` (see :mod:`course_lib.client_adapters.recording`),
  under ``process``; ``config`` uses kafka-python's names (translate them inside the adapter);
  its ``crash()`` records ``crash_client`` and closes it without a word to the cluster,
  ``close_quietly()`` closes it ignoring errors, ``node_id`` is ``process``;
- ``freeze(backend, consumer)``: the consumer stops polling for good (record ``freeze``);
- ``end_offset(cluster, topic, partition, read_committed)``: the partition's end offset (its last
  stable offset with ``read_committed``) as this client reads it;
- ``final_read(backend, topic, isolation_level)``: Jepsen's final read of every partition,
  recorded as ``final_read`` (with the aborted records as evidence when read committed).

Register it in :data:`CLIENTS` and give it a typed conformance line in
``tests/test_seam_types.py``; ``tests/test_layers.py`` then runs scenarios with it on every
cluster it supports.

The share-group workload (KIP-932) has a contract of its own, since kafka-python has no share
consumer: :func:`share_consumer` builds, for a client of :data:`SHARE_CLIENTS`, a consumer with
confluent-kafka's ``ShareConsumer`` API - ``subscribe(topics)``; ``poll(timeout)`` -> messages
with ``error()``, ``topic()``, ``partition()``, ``offset()``, ``key()``, ``value()``,
``delivery_count()``; ``acknowledge(message, AcknowledgeType.X)`` (any ``AcknowledgeType``: the
ids are the wire's); ``commit_sync()`` -> ``{TopicPartition: None | KafkaException}``;
``commit_async()``, its outcome given to ``set_acknowledgement_commit_callback``'s callback;
``close()``. ``config`` uses librdkafka's (= Java's) names; the simulator's takes the simulated
``Cluster`` as ``bootstrap.servers``. A share-group experiment is written once against it. A
worker that dies runs in a process of its own (``own_process=True``: confluent-kafka's in a
Python process, :mod:`.own_process`; Java's in a JVM of its own), with ``kill()`` and
``freeze()``. The share-group experiments drive one through :class:`.share_worker.ShareWorker`
(``poll(seconds)`` -> ``[(offset, value, delivery count, message)]``, ``acknowledge(message,
"accept")``, ``commit()``, ``crash()``...): the worker keeps the consumer, the experiments keep
the records, faults and waits. The share-group differential calls its members by name
(:mod:`.share_sequences`: ``ShareClients`` - a side's producer, ``produce(topic, values)``,
``members(topic, group)`` - and ``ShareMembers``: ``join``, ``poll``, ``acknowledge(name, message,
"accept")``, ``commit_sync``, ``commit_async`` (with its callback's reports), ``close``, ``kill``,
``freeze``, ``leave``), replaying its steps through the call-sequence contract below;
its sides keeping the cluster's part and no client; which members the coordinator gave a
partition it asks through kafka-python's admin connection
(:class:`.for_kafka_python.ShareGroupAssignments`).

The consumer-group workload (rebalances, KIP-848's ``group.protocol=consumer`` or the classic
protocol) has one too: :func:`group_member` builds, for a client of :data:`GROUP_CLIENTS`, one
subscribed member with the interface of :class:`.members.GroupMember` - ``poll(timeout_s)``
(the records one poll read, counted in ``seen``), ``commit()``, ``owned()``, ``epoch()`` (None
where the client does not show it), ``state()`` (member id, epoch, partitions and positions at
once), ``kill()``, ``close()``; ``config`` uses Java's names (the simulator's takes the simulated
``Cluster`` as ``bootstrap.servers``). A member that dies is made with ``own_process=True``
(confluent-kafka's in a Python process, Java's in a JVM of its own; the simulator's dies in
virtual time whichever it is; kafka-python's polls in a thread of its own and has none). Only the
simulator's member can be given its member id (``member_id``: every real client draws its own,
KIP-1082), which is how a differential's simulated member takes the id its Java twin drew.

What no workload's contract covers - the client library's own producer and consumer, with the
library's whole public API and its own config names, unrecorded - :func:`library_producer` and
:func:`library_consumer` build (:mod:`.library`): the differentials compare them call by call.
So no class outside this package builds a client library's client (``tests/test_layers.py``): a
cluster that needs one (LocalCluster's ready check, a shared cluster's learner clients,
:mod:`.learner`) sits above this package and gets it here.

A differential drives them through the call-sequence contract (:mod:`.call_sequences`):
``replay(client, calls, actions)`` makes each named call (``actions``: a name -> what it does to
the client) and returns what each answered as the string compared (``answer``: the exception
class, "ok" or the value's repr; ``Failures``: "ok" or "failed"), with ``before`` / ``after``
hooks around each call; ``wait_for_outcomes(client, producer)`` waits until every send of a
library producer has its outcome on that client's clock (the simulator's virtual one,
kafka-python's accumulator). The cluster side is given separately, a ``SequenceCluster`` that
holds no client: ``read``, ``wait_until``, ``fault``, ``heal``, ``poll_until``
(:mod:`course_lib.experiments.sequence_clusters`: the simulated cluster's virtual clock, the
wire cluster's wall clock). So no class outside this package keeps a client and forwards calls
to it either (``tests/test_layers.py``).

A client-side fault is the adapters' too: :mod:`.crashing` wraps the learner's kafka-python
consumer (``CrashingConsumer``) or transactional producer (``CrashingProducer``) so it dies right
after a call - ``reached(call)`` is told each call made, and raises to crash; the grader
(:mod:`course_lib.grading.harness`) hands in its plan of which call dies.
"""

from __future__ import annotations

from typing import Any, Protocol

# the library clients' contract, re-exported where the other contracts live
from .library import LIBRARY_CONSUMERS as LIBRARY_CONSUMERS
from .library import LIBRARY_PRODUCERS as LIBRARY_PRODUCERS
from .library import library_consumer as library_consumer
from .library import library_producer as library_producer


class ClientSide(Protocol):
    """How a backend builds and calls clients (see the module docstring)."""

    name: str

    def producer(self, backend: Any, process: str, config: dict) -> Any: ...
    def consumer(self, backend: Any, process: str, topics: tuple[str, ...], config: dict) -> Any: ...
    def freeze(self, backend: Any, consumer: Any) -> None: ...
    def end_offset(self, cluster: Any, topic: str, partition: int = 0, read_committed: bool = False) -> int: ...
    def final_read(self, backend: Any, topic: str, isolation_level: str = "read_uncommitted") -> list: ...


def kafka_python() -> ClientSide:
    """kafka-python 3.0.12's clients (the default client of every wall-clock cluster)."""
    from .for_kafka_python import KafkaPythonClients

    return KafkaPythonClients()


def confluent_kafka() -> ClientSide:
    """librdkafka's clients through confluent-kafka 2.16.1 (the ``lab`` extra installs it)."""
    from .for_confluent_kafka import clients

    return clients()


def java() -> ClientSide:
    """The Java client (the lab's Kafka release) through a driver process (:mod:`course_lib.java_client`; needs a
    JDK and Maven, :func:`java_missing` says what is missing)."""
    from .for_java import clients

    return clients()


def java_missing() -> str | None:
    """Why the Java client cannot run here (None: it can)."""
    from course_lib.clusters.jars import jvm_missing

    missing = jvm_missing()
    return None if missing is None else f"the Java client needs a JVM: {missing}"


def confluent_missing() -> str | None:
    """Why confluent-kafka cannot run here (None: it can)."""
    try:
        import confluent_kafka  # noqa: F401
    except ImportError:
        return "confluent-kafka is not installed (pip install .[lab])"
    return None


#: every client library's adapter, by name: what tests/test_composition.py composes with each cluster
CLIENTS = {"kafka-python": kafka_python, "confluent-kafka": confluent_kafka, "java": java}

#: the workloads, each with its contract: the producer workload (:class:`ClientSide`, through a
#: backend), the consumer-group workload with either group protocol (:func:`group_member`, chosen
#: by ``group.protocol``) and the share-group workload (:func:`share_consumer`)
WORKLOADS = ("producer", "consumer classic", "consumer protocol", "share")
#: every client: the simulator's own, then the client libraries'
ALL_CLIENTS = ("simulator", *CLIENTS)
#: the workloads a client lacks, each with why (as a cluster's ``missing_parts()``); a workload not
#: listed, the client implements in its adapter
LACKS: dict[str, dict[str, str]] = {
    "simulator": {},
    "kafka-python": {
        "consumer protocol": "kafka-python 3.0.12 speaks only the classic group protocol (no KIP-848)",
        "share": "kafka-python 3.0.12 has no share consumer (no KIP-932)",
    },
    "confluent-kafka": {},
    "java": {},
}
#: what each client needs of the machine, when it needs anything: () -> why it cannot run (None: it can)
NEEDS: dict[str, Any] = {"java": java_missing, "confluent-kafka": confluent_missing}
#: the clients that live in the simulated cluster's process and join its ``Cluster`` object; every
#: other client reaches a cluster over TCP, by its address
IN_PROCESS = frozenset({"simulator"})


def missing_workloads(client: str) -> dict[str, str]:
    """The workloads ``client`` cannot run here, each with why: the ones it lacks, or all of them
    when the machine lacks what it needs.

    >>> sorted(missing_workloads("kafka-python"))
    ['consumer protocol', 'share']
    >>> missing_workloads("simulator")
    {}
    """
    if client not in LACKS:
        raise ValueError(f"no client {client!r}: choose one of {', '.join(ALL_CLIENTS)}")
    why = client_missing(client)
    return {w: why for w in WORKLOADS} if why else dict(LACKS[client])


def client_missing(client: str) -> str | None:
    """Why this machine cannot run ``client`` at all (:data:`NEEDS`; None: it can)."""
    return NEEDS[client]() if client in NEEDS else None


def cluster_missing(client: str, cluster: Any) -> str | None:
    """Why ``client`` cannot reach ``cluster`` (a :class:`~course_lib.clusters.Topology`), None
    when it can: a client library needs an address; the simulator's clients join the simulated
    cluster's object itself, on its clock."""
    address = isinstance(cluster.client_config()["bootstrap_servers"], str)
    if client in IN_PROCESS and address:
        return f"the {client}'s clients live in the simulated cluster's process: {cluster!r} is reached over TCP"
    if client not in IN_PROCESS and not address:
        return (
            f"{client} speaks Kafka's protocol over TCP: {cluster!r} has no address (the simulator's clients join it)"
        )
    return None


def _simulated_share_consumer(config: dict, own_process: bool) -> Any:
    from course_lib.clients.share_consumer import ShareConsumer

    if own_process:
        raise ValueError(
            "the simulator's share consumer lives in the simulated cluster's process, on its clock: it "
            "has no process of its own to kill (its scenarios crash a worker with the nemesis: "
            "course_lib.experiments.share_scenarios)"
        )
    return ShareConsumer(config)


def _rdkafka_share_consumer(config: dict, own_process: bool) -> Any:
    if own_process:
        from .own_process import ShareConsumerProcess

        return ShareConsumerProcess(config)
    from .for_confluent_kafka import share_consumer

    return share_consumer(config)


def _java_share_consumer(config: dict, own_process: bool) -> Any:
    from .for_java import ShareConsumer

    return ShareConsumer(config, own_process)


#: the clients of the share-group workload, by name: (config, own_process) -> a share consumer
#: (module docstring)
SHARE_CLIENTS = {
    "simulator": _simulated_share_consumer,
    "confluent-kafka": _rdkafka_share_consumer,
    "java": _java_share_consumer,
}


def share_consumer(client: str, config: dict, own_process: bool = False) -> Any:
    """A share consumer of ``client`` (a key of :data:`SHARE_CLIENTS`) with confluent-kafka's API.
    ``own_process``: in a process of its own, with ``kill()`` (SIGKILL: a crash, its connections
    close) and ``freeze()`` (SIGSTOP: a machine gone, they stay open); ``close()`` ends it.

    >>> share_consumer("kafka-python", {})
    Traceback (most recent call last):
    ValueError: no share consumer for 'kafka-python': choose one of simulator, confluent-kafka, java
    """
    if client not in SHARE_CLIENTS:
        raise ValueError(f"no share consumer for {client!r}: choose one of {', '.join(SHARE_CLIENTS)}")
    return SHARE_CLIENTS[client](config, own_process)


def _java_share_group_description(servers: str, group: str) -> dict:
    from .for_java import describe_share_group

    return describe_share_group(servers, group)


#: the admins that describe a share group (ShareGroupDescribe), by client: (servers, group) ->
#: ``{"state", "members": [{"assignment": [{"topic", "partition"}]}]}``. confluent-kafka 2.16.1's
#: AdminClient has no describe_share_groups, kafka-python 3.0.12's admin none either.
SHARE_GROUP_DESCRIBERS = {"java": _java_share_group_description}


def share_group_describer(client: str) -> Any:
    """``client``'s way to describe a share group (see :data:`SHARE_GROUP_DESCRIBERS`), or None.

    >>> share_group_describer("confluent-kafka") is None
    True
    """
    return SHARE_GROUP_DESCRIBERS.get(client)


def _kafka_python_group_member(config: dict, topics: list[str], own_process: bool, member_id: str | None) -> Any:
    if own_process:
        raise ValueError(
            "kafka-python's member polls in a thread of this process: it has no process of its own to kill"
        )
    from .for_kafka_python import GroupMember

    return GroupMember(config, topics)


def _simulated_group_member(config: dict, topics: list[str], own_process: bool, member_id: str | None) -> Any:
    from .simulated import GroupMember

    return GroupMember(config, topics, member_id)


def _rdkafka_group_member(config: dict, topics: list[str], own_process: bool, member_id: str | None) -> Any:
    if own_process:
        from .own_process import GroupMemberProcess

        return GroupMemberProcess(config, topics)
    from .for_confluent_kafka import GroupMember

    return GroupMember(config, topics)


def _java_group_member(config: dict, topics: list[str], own_process: bool, member_id: str | None) -> Any:
    from .for_java import GroupMember

    return GroupMember(config, topics, own_process)


#: the clients of the consumer-group workload, by name: (config, topics, own_process, member_id)
#: -> a subscribed :class:`.members.GroupMember` (module docstring). kafka-python 3.0.12 speaks
#: only the classic protocol.
GROUP_CLIENTS = {
    "kafka-python": _kafka_python_group_member,
    "simulator": _simulated_group_member,
    "confluent-kafka": _rdkafka_group_member,
    "java": _java_group_member,
}
#: the clients whose member joins with a member id it is given (the others draw their own, KIP-1082)
GIVEN_MEMBER_IDS = frozenset({"simulator"})


def group_member(
    client: str, config: dict, topics: list[str], own_process: bool = False, member_id: str | None = None
) -> Any:
    """A member of ``client`` (a key of :data:`GROUP_CLIENTS`) subscribed to ``topics``, with the
    interface of :class:`.members.GroupMember`; ``own_process``: one that can die (``kill()``);
    ``member_id``: the id it joins with (a client of :data:`GIVEN_MEMBER_IDS` only).

    >>> group_member("kafka-python", {"group.protocol": "consumer"}, ["t"])
    Traceback (most recent call last):
    ValueError: kafka-python 3.0.12 speaks only the classic group protocol, not 'consumer'
    >>> group_member("aiokafka", {}, ["t"])
    Traceback (most recent call last):
    ValueError: no group member for 'aiokafka': choose one of kafka-python, simulator, confluent-kafka, java
    >>> group_member("java", {}, ["t"], member_id="m-1")
    Traceback (most recent call last):
    ValueError: java draws its members' ids itself (KIP-1082): only simulator's member is given one
    """
    if client not in GROUP_CLIENTS:
        raise ValueError(f"no group member for {client!r}: choose one of {', '.join(GROUP_CLIENTS)}")
    if member_id is not None and client not in GIVEN_MEMBER_IDS:
        raise ValueError(
            f"{client} draws its members' ids itself (KIP-1082): only {', '.join(sorted(GIVEN_MEMBER_IDS))}'s "
            "member is given one"
        )
    return GROUP_CLIENTS[client](config, topics, own_process, member_id)
