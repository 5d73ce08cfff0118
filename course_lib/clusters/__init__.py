"""The cluster side of the seam: what a backend may ask of a cluster, in parts.

A scenario runs on a *client* side (:mod:`course_lib.client_adapters`: how applications are
built and called) composed with a *cluster* side (this package): the
:class:`~course_lib.broker.simulated_cluster.SimulatedCluster`, the
:class:`~course_lib.wire.cluster.WireCluster`, the :class:`~course_lib.real.cluster.LocalCluster`
and :class:`~course_lib.real.connect.RemoteCluster`. Each cluster implements its parts itself
(:mod:`.parts`); :mod:`.faults` declares each fault of a part once; :mod:`.lab` holds the lab's broker profile every cluster's preset derives from.

This package imports no cluster: the clusters import it.
"""

from .faults import (
    FAULT,
    FAULTS,
    PART_FAULTS,
    Aim,
    AtNode,
    AtProducer,
    BrokerFaultsElsewhere,
    BrokerFaultsHandedOn,
    Fault,
    FaultTarget,
    MessageFaultsAtLeader,
    cluster_faults,
    handed_on,
    missing_why,
)
from .parts import (
    AtLeader,
    BrokerFaults,
    BrokerProcessFaults,
    CreatesTopics,
    FaultSchedules,
    LostRequests,
    MessageFaults,
    NamesAsGiven,
    NetworkPartitions,
    Part,
    RefusedRequests,
    TopicSpec,
    Topology,
    VirtualTime,
)

__all__ = [
    "FAULT",
    "FAULTS",
    "PART_FAULTS",
    "Aim",
    "AtLeader",
    "AtNode",
    "AtProducer",
    "BrokerFaultsElsewhere",
    "BrokerFaultsHandedOn",
    "Fault",
    "FaultTarget",
    "MessageFaultsAtLeader",
    "handed_on",
    "BrokerFaults",
    "BrokerProcessFaults",
    "CreatesTopics",
    "FaultSchedules",
    "LostRequests",
    "MessageFaults",
    "NamesAsGiven",
    "NetworkPartitions",
    "Part",
    "RefusedRequests",
    "TopicSpec",
    "Topology",
    "VirtualTime",
    "cluster_faults",
    "missing_why",
]
