"""Every adapter of the seam conforms to the protocols of the parts it claims - checked by mypy
(this file is in mypy's scope, pyproject.toml; tests/test_lint.py runs it), not by hasattr: each
function below assigns an adapter to a protocol, and a missing or mis-typed member is a type
error. The tests run the same functions on real objects, so the assignments are also live code.
"""

from __future__ import annotations

from course_lib.backend import Backend, ComposedBackend, SimBackend
from course_lib.backends.base import ClientsRole, ClockRole, FinalPhaseRole, NemesisRole, TopologyRole
from course_lib.broker.simulated_cluster import SimulatedCluster
from course_lib.client_adapters import CLIENTS, ClientSide
from course_lib.client_adapters.for_kafka_python import KafkaPythonClients
from course_lib.client_adapters.call_sequences import SequenceCluster
from course_lib.client_adapters.recorded import RecordedClients
from course_lib.client_adapters.simulated import SimulatedClients
from course_lib.broker.cluster import Cluster
from course_lib.clusters import (
    BrokerFaults,
    FaultSchedules,
    FaultTarget,
    LostRequests,
    MessageFaults,
    NetworkPartitions,
    Part,
    RefusedRequests,
    Topology,
    VirtualTime,
)
from course_lib.real.cluster import LocalCluster
from course_lib.real.connect import RemoteCluster, connect
from course_lib.experiments.sequence_clusters import VirtualClock, WallClock
from course_lib.wire.cluster import WireCluster
from course_lib.wire.nemesis import ScheduleTarget


# ---- the cluster side: each cluster, each part it has --------------------------------------------
def local_cluster_parts(
    c: LocalCluster,
) -> tuple[Topology, BrokerFaults, MessageFaults, LostRequests, RefusedRequests]:
    return c, c, c, c, c


def remote_cluster_parts(c: RemoteCluster) -> tuple[Topology, MessageFaults, LostRequests, RefusedRequests]:
    return c, c, c, c


def wire_cluster_parts(
    c: WireCluster,
) -> tuple[Topology, BrokerFaults, MessageFaults, LostRequests, RefusedRequests, FaultSchedules]:
    return c, c, c, c, c, c


def simulated_cluster_parts(
    c: SimulatedCluster,
) -> tuple[Topology, BrokerFaults, MessageFaults, LostRequests, FaultSchedules, NetworkPartitions, VirtualTime]:
    return c, c, c, c, c, c, c


# ---- what a fault schedule acts on: the simulation itself, and the wire cluster over TCP -----------
def schedule_targets(a: Cluster, b: ScheduleTarget) -> tuple[FaultTarget, FaultTarget]:
    return a, b


# ---- the client side -----------------------------------------------------------------------------
def kafka_python_client(c: KafkaPythonClients) -> ClientSide:
    return c


def recorded_clients(c: RecordedClients) -> ClientSide:
    return c


def simulated_clients(c: SimulatedClients) -> ClientSide:
    return c


# ---- the backends: each of the five roles, and the whole -----------------------------------------
def composed_backend_roles(
    b: ComposedBackend,
) -> tuple[TopologyRole, ClientsRole, ClockRole, NemesisRole, FinalPhaseRole]:
    return b, b, b, b, b


def sim_backend_roles(b: SimBackend) -> tuple[TopologyRole, ClientsRole, ClockRole, NemesisRole, FinalPhaseRole]:
    return b, b, b, b, b


def whole_backends(a: ComposedBackend, b: SimBackend) -> tuple[Backend, Backend]:
    return a, b


def test_the_parts_a_cluster_claims_are_the_parts_it_does_not_say_are_missing():
    shared = connect("kafka.example:9092", prefix="alice")  # nothing listens there: nothing may be asked
    assert remote_cluster_parts(shared) == (shared,) * 4
    assert Part.BROKER_FAULTS in shared.missing_parts() and Part.MESSAGE_FAULTS not in shared.missing_parts()
    local = LocalCluster()  # not started: no JVM, no port
    assert local_cluster_parts(local) == (local,) * 5
    messages = {Part.MESSAGE_FAULTS, Part.LOST_REQUESTS, Part.REFUSED_REQUESTS}
    assert not ({Part.BROKER_FAULTS} | messages) & set(local.missing_parts())
    assert messages <= set(LocalCluster(proxies=False).missing_parts())
    wire = WireCluster.lab(seed=1)  # not started: no thread, no listener
    try:
        assert wire_cluster_parts(wire) == (wire,) * 6
        assert set(wire.missing_parts()) == {Part.NETWORK_PARTITIONS, Part.VIRTUAL_TIME}
        target = ScheduleTarget(wire)
        assert schedule_targets(wire.cluster, target) == (wire.cluster, target)
    finally:
        wire.stop()


def test_the_simulated_cluster_has_every_part_itself():
    sim = SimulatedCluster(seed=1)
    assert simulated_cluster_parts(sim) == (sim,) * 7 and set(sim.missing_parts()) == {Part.REFUSED_REQUESTS}
    clients = SimulatedClients()
    assert simulated_clients(clients) is clients
    backend = SimBackend(sim, clients)  # the simulator's backend: exactly this pair
    assert backend.cluster is sim and backend.clients is clients and backend.history is sim.history


def test_every_client_adapter_is_registered_and_conforms():
    assert set(CLIENTS) == {"kafka-python", "confluent-kafka", "java"}
    clients = CLIENTS["kafka-python"]()
    assert isinstance(clients, KafkaPythonClients) and kafka_python_client(clients).name == "kafka-python"
    librdkafka = CLIENTS["confluent-kafka"]()  # builds nothing until a client is asked for
    assert isinstance(librdkafka, RecordedClients) and recorded_clients(librdkafka).name == "confluent-kafka"
    java = CLIENTS["java"]()  # starts no JVM until a client is asked for
    assert isinstance(java, RecordedClients) and recorded_clients(java).name == "java"


def test_both_backends_fill_every_role():
    sim = SimBackend.start(seed=1)
    composed = ComposedBackend(connect("kafka.example:9092", prefix="alice"))
    assert sim_backend_roles(sim) == (sim,) * 5 and composed_backend_roles(composed) == (composed,) * 5
    assert whole_backends(composed, sim) == (composed, sim)


def call_sequence_clusters(simulated: VirtualClock, wire: WallClock) -> tuple[SequenceCluster, SequenceCluster]:
    # the cluster side of the call-sequence contract (course_lib.client_adapters.call_sequences)
    return simulated, wire
