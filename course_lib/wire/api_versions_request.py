"""What Kafka 4.4.0 checks in an ApiVersions request before it answers with the versions: its
ApiVersionsRequest.isValid, v5's part (KIP-1242). Both the SASL authenticator, which answers
ApiVersions before a login, and the handler after it refuse such a request with
INVALID_REQUEST; here, not in ``apis.api_versions``, so ``course_lib.wire.sasl`` reads it without
importing the handlers."""

from __future__ import annotations


def names_half_a_node(request) -> bool:
    """A v5 request that gives a ClusterId without a NodeId, or the reverse: Kafka needs both or
    neither (``ApiVersionsRequest.isValid``)."""
    return request.version >= 5 and (request.cluster_id is None) != (request.node_id == -1)
