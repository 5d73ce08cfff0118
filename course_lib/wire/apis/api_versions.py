"""ApiVersions: the versions of every API this front end implements."""

from __future__ import annotations

from kafka.protocol.admin.transactions import DescribeTransactionsRequest, ListTransactionsRequest
from kafka.protocol.admin import (
    AlterPartitionReassignmentsRequest,
    CreateAclsRequest,
    DeleteAclsRequest,
    DescribeAclsRequest,
    AlterReplicaLogDirsRequest,
    CreatePartitionsRequest,
    CreateTopicsRequest,
    DeleteGroupsRequest,
    DeleteRecordsRequest,
    DeleteTopicsRequest,
    DescribeClusterRequest,
    DescribeConfigsRequest,
    DescribeGroupsRequest,
    DescribeLogDirsRequest,
    DescribeQuorumRequest,
    DescribeTopicPartitionsRequest,
    ElectLeadersRequest,
    IncrementalAlterConfigsRequest,
    ListConfigResourcesRequest,
    ListGroupsRequest,
    ListPartitionReassignmentsRequest,
)
from kafka.protocol.consumer import (
    FetchRequest,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    ListOffsetsRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    OffsetForLeaderEpochRequest,
    SyncGroupRequest,
)
from kafka import errors as Errors
from kafka.protocol.metadata import ApiVersionsResponse, FindCoordinatorRequest, MetadataRequest
from kafka.protocol.producer import (
    AddOffsetsToTxnRequest,
    AddPartitionsToTxnRequest,
    EndTxnRequest,
    InitProducerIdRequest,
    ProduceRequest,
    TxnOffsetCommitRequest,
)
from kafka.protocol.sasl import SaslAuthenticateRequest, SaslHandshakeRequest

from .schemas import (
    AlterShareGroupOffsetsRequest,
    ApiVersionsRequest,
    ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest,
    DeleteShareGroupOffsetsRequest,
    ShareAcknowledgeRequest,
    ShareFetchRequest,
    DescribeShareGroupOffsetsRequest,
    ShareGroupDescribeRequest,
    ShareGroupHeartbeatRequest,
)
from ..api_versions_request import names_half_a_node
from .common import build
from .metadata import CLUSTER_ID

#: request class -> (min version, max version): what ApiVersions advertises (here, not beside the
#: handlers in ``course_lib.wire.apis.SUPPORTED``, because this handler answers with it)
_VERSIONS = {
    ProduceRequest: (3, 13),  # v12+: transactions v2 (KIP-890), v13: topic ids
    FetchRequest: (4, 18),  # v13+: topic ids; v15 replica state, v17-18 follower fields (unused here)
    ListOffsetsRequest: (1, 11),
    MetadataRequest: (0, 13),  # v13 adds a top-level error code only
    OffsetCommitRequest: (2, 9),  # v10: topic ids
    OffsetFetchRequest: (1, 9),  # v10: topic ids
    FindCoordinatorRequest: (0, 6),
    JoinGroupRequest: (0, 9),
    HeartbeatRequest: (0, 4),
    LeaveGroupRequest: (0, 5),
    SyncGroupRequest: (0, 5),
    DescribeGroupsRequest: (0, 5),
    ListGroupsRequest: (0, 4),
    ApiVersionsRequest: (0, 5),  # v5: the client names the cluster and node it means (KIP-1242)
    CreateTopicsRequest: (2, 7),
    DeleteTopicsRequest: (1, 5),  # v6: topics by id
    InitProducerIdRequest: (0, 5),
    OffsetForLeaderEpochRequest: (2, 4),
    AddPartitionsToTxnRequest: (0, 3),  # v4+: broker to coordinator only (Kafka: 0-5); no client sends it
    AddOffsetsToTxnRequest: (0, 4),
    EndTxnRequest: (0, 5),  # v5: transactions v2 (answers the bumped producer id and epoch)
    TxnOffsetCommitRequest: (0, 5),  # v5: transactions v2 (adds the offsets partition itself)
    DescribeConfigsRequest: (1, 4),
    # the admin APIs librdkafka's and Java's admin clients call, at Kafka 4.3.1's versions
    CreatePartitionsRequest: (0, 3),
    DeleteRecordsRequest: (0, 2),
    DeleteGroupsRequest: (0, 2),
    IncrementalAlterConfigsRequest: (0, 1),
    DescribeClusterRequest: (0, 2),
    # the admin APIs a Kafka 4.3 admin client uses, served from the simulated cluster's state; DescribeLogDirs v5 is
    # what tells kafka-python (broker_version_data) that the broker is a 4.3
    DescribeLogDirsRequest: (1, 5),
    AlterReplicaLogDirsRequest: (1, 2),
    ElectLeadersRequest: (0, 2),
    DescribeTopicPartitionsRequest: (0, 0),
    ListConfigResourcesRequest: (0, 1),
    DescribeQuorumRequest: (0, 2),
    AlterPartitionReassignmentsRequest: (0, 1),
    ListPartitionReassignmentsRequest: (0, 0),
    # ACLs (course_lib.wire.apis.acls): advertised with or without an authorizer, as Kafka does (it
    # answers SECURITY_DISABLED without one); v0 is gone since Kafka 4.0 (KIP-896)
    DescribeAclsRequest: (1, 3),
    CreateAclsRequest: (1, 3),
    DeleteAclsRequest: (1, 3),
    # the transaction coordinator's state (course_lib.wire.apis.transaction_states)
    DescribeTransactionsRequest: (0, 0),
    ListTransactionsRequest: (0, 2),
    # the consumer group protocol (KIP-848), our own schemas (course_lib.wire.apis.schemas)
    ConsumerGroupHeartbeatRequest: (0, 1),
    ConsumerGroupDescribeRequest: (0, 1),
    # share groups (KIP-932), our own schemas too: Kafka 4.3.1's versions (v0, the 4.0 early
    # access, is gone since 4.1; v2 of the fetch and acknowledge adds RENEW, KIP-1222)
    ShareGroupHeartbeatRequest: (1, 1),
    ShareGroupDescribeRequest: (1, 1),
    DescribeShareGroupOffsetsRequest: (0, 1),
    # Kafka 4.4.0's only versions (course_lib.wire.apis.share_group_offsets)
    AlterShareGroupOffsetsRequest: (0, 0),
    DeleteShareGroupOffsetsRequest: (0, 0),
    ShareFetchRequest: (1, 2),
    ShareAcknowledgeRequest: (1, 2),
}

#: SaslHandshake, SaslAuthenticate: advertised by a cluster with users only (``WireCluster(users=...)``)
_SASL_VERSIONS = {SaslHandshakeRequest: (0, 1), SaslAuthenticateRequest: (0, 2)}

#: the same by api key
SUPPORTED_VERSIONS = {cls.API_KEY: versions for cls, versions in _VERSIONS.items()}
SASL_VERSIONS = {cls.API_KEY: versions for cls, versions in _SASL_VERSIONS.items()}
#: api key -> kafka-python's request class, for every API implemented here (to decode it)
REQUEST_CLASSES = {cls.API_KEY: cls for cls in (*_VERSIONS, *_SASL_VERSIONS)}


def advertised(wire) -> dict:
    """api key -> (min version, max version) that ``wire``'s brokers advertise."""
    return {**SUPPORTED_VERSIONS, **SASL_VERSIONS} if wire.sasl is not None else SUPPORTED_VERSIONS


#: Kafka 4.4.0's REBOOTSTRAP_REQUIRED (org.apache.kafka.common.protocol.Errors, KIP-1242): kafka-python
#: 3.0.12 has no error class for it
REBOOTSTRAP_REQUIRED = 129


def refusal(gw, req) -> int:
    """Kafka 4.4.0's check of an ApiVersions v5 request (KafkaApis.handleApiVersionsRequest): a
    ClusterId without a NodeId or the reverse is INVALID_REQUEST; a ClusterId and NodeId that are
    not this cluster's and this broker's are REBOOTSTRAP_REQUIRED (the client's metadata is stale:
    it must bootstrap again), except before a SASL login (SaslServerAuthenticator answers it then,
    and does not look). 0 when neither, as for every older version."""
    if names_half_a_node(req):
        return Errors.InvalidRequestError.errno
    if req.version < 5 or req.cluster_id is None or (gw.authenticator is not None and not gw.authenticator.complete):
        return 0
    return REBOOTSTRAP_REQUIRED if (req.cluster_id, req.node_id) != (CLUSTER_ID, gw.broker_id) else 0


def api_versions(gw, req) -> None:
    """The versions, and (v3+) the broker features: a client that speaks a feature (the Java client
    and ``transaction.version`` >= 2, ``group.version`` >= 1) reads it here, so it negotiates
    with the simulated cluster what it negotiates with Kafka. The features epoch is the answering
    broker's metadata version, as KRaft's is the offset of its metadata image. A refused v5 request
    gets Kafka's error answer: the error code and no ApiKeys (ApiVersionsRequest.getErrorResponse)."""
    # v5's answer is v4's byte for byte, and kafka-python's response class stops at v4
    version = min(req.version, ApiVersionsResponse.max_version)
    error = refusal(gw, req)
    if error:
        response = build(ApiVersionsResponse, version, error_code=error, api_keys=[], throttle_time_ms=0)
        return gw.reply(response, version)
    broker = gw.wire.cluster.brokers[gw.broker_id]
    finalized = broker.options.finalized_features()
    response = build(
        ApiVersionsResponse,
        version,
        error_code=0,
        api_keys=[
            {"api_key": key, "min_version": lo, "max_version": hi}
            for key, (lo, hi) in sorted(advertised(gw.wire).items())
        ],
        throttle_time_ms=0,
        supported_features=[
            {"name": name, "min_version": lo, "max_version": hi}
            for name, (lo, hi) in sorted(broker.options.supported_features().items())
        ],
        finalized_features_epoch=max(broker.metadata_version, 0),
        finalized_features=[
            {"name": name, "max_version_level": level, "min_version_level": level}
            for name, level in sorted(finalized.items())
        ],
    )
    gw.reply(response, version)
