"""Who is asking, and may they: the broker's side of ACLs on the wire cluster.

A cluster configured with ``authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer``
(``WireCluster(config=...)``, ``--config``; with ``super.users`` and
``allow.everyone.if.no.acl.found`` as the workshop's Kafka has them, :mod:`course_lib.real.security`)
has an :class:`~course_lib.broker.acls.Authorizer`; each handler asks it, as Kafka's ``KafkaApis``
asks its ``AuthHelper``, with the connection's principal (``User:<name>`` after a SASL login,
``User:ANONYMOUS`` on a PLAINTEXT listener) and the client's address. Without an authorizer every
question is answered yes, so nothing changes.
"""

from __future__ import annotations

from typing import Iterable

from ..broker.acls import ANONYMOUS, CLUSTER, CLUSTER_NAME, SUPPORTED_OPERATIONS, Authorizer

#: an authorized-operations field nobody asked for, or of a resource refused (the schemas'
#: default, bit 31 alone; kafka-python's bitfield type takes it as None)
NOT_ASKED = -2147483648


def principal(gw) -> str:
    """The connection's principal as Kafka names it."""
    auth = gw.authenticator
    return f"User:{auth.principal}" if auth is not None and auth.principal else ANONYMOUS


def client_host(gw) -> str:
    """The client's address (``Connection.peer`` is ``host:port``)."""
    peer = getattr(gw.conn, "peer", "") or ""
    return peer.rsplit(":", 1)[0] if ":" in peer else peer


def authorizer(gw) -> Authorizer | None:
    return gw.wire.authorizer


def authorized(gw, operation: int, resource_type: int, name: str = CLUSTER_NAME) -> bool:
    """``AuthHelper.authorize``: may this connection do ``operation`` to the resource (the
    cluster unless named)? Always, on a cluster without an authorizer."""
    auth = gw.wire.authorizer
    return auth is None or auth.authorize(principal(gw), client_host(gw), operation, resource_type, name)


def allowed_names(gw, operation: int, resource_type: int, names: Iterable[str]) -> set[str]:
    """``AuthHelper.filterByAuthorized``: those of ``names`` this connection may ``operation``."""
    return {n for n in names if authorized(gw, operation, resource_type, n)}


def cluster_authorized(gw, operation: int) -> bool:
    return authorized(gw, operation, CLUSTER, CLUSTER_NAME)


def authorized_by_resource_type(gw, operation: int, resource_type: int) -> bool:
    auth = gw.wire.authorizer
    return auth is None or auth.authorize_by_resource_type(principal(gw), client_host(gw), operation, resource_type)


def authorized_operations(gw, resource_type: int, name: str = CLUSTER_NAME) -> set[int]:
    """``AuthHelper.authorizedOperations``: the codes of the operations this connection may do to
    the resource (kafka-python's bitfield type: bit n is operation n); without an authorizer
    every operation the resource type has."""
    auth = gw.wire.authorizer
    if auth is None:
        return set(SUPPORTED_OPERATIONS[resource_type])
    return set(auth.authorized_operations(principal(gw), client_host(gw), resource_type, name))


def bit_field(ops: set[int]) -> int:
    """The operations as the int32 bit field of schemas that do not say bitfield
    (DescribeTopicPartitions)."""
    return sum(1 << op for op in ops)
