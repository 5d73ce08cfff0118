"""ApiVersions: the versions of every API this front end implements."""

from __future__ import annotations

from kafka.protocol.admin import (
    CreateTopicsRequest,
    DeleteTopicsRequest,
    DescribeConfigsRequest,
    DescribeGroupsRequest,
    ListGroupsRequest,
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
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, FindCoordinatorRequest, MetadataRequest
from kafka.protocol.producer import (
    AddOffsetsToTxnRequest,
    AddPartitionsToTxnRequest,
    EndTxnRequest,
    InitProducerIdRequest,
    ProduceRequest,
    TxnOffsetCommitRequest,
)
from kafka.protocol.sasl import SaslAuthenticateRequest, SaslHandshakeRequest

from .common import _reply

#: api key -> (min version, max version): what ApiVersions advertises (here, not beside the
#: handlers in ``course_lib.wire.apis.SUPPORTED``, because this handler answers with it)
SUPPORTED_VERSIONS = {
    ProduceRequest.API_KEY: (3, 11),  # v12+: transactions v2 (KIP-890), v13: topic ids
    FetchRequest.API_KEY: (4, 12),  # v13+: topic ids
    ListOffsetsRequest.API_KEY: (1, 11),
    MetadataRequest.API_KEY: (0, 12),  # v13 adds a top-level error code only
    OffsetCommitRequest.API_KEY: (2, 9),  # v10: topic ids
    OffsetFetchRequest.API_KEY: (1, 9),  # v10: topic ids
    FindCoordinatorRequest.API_KEY: (0, 6),
    JoinGroupRequest.API_KEY: (0, 9),
    HeartbeatRequest.API_KEY: (0, 4),
    LeaveGroupRequest.API_KEY: (0, 5),
    SyncGroupRequest.API_KEY: (0, 5),
    DescribeGroupsRequest.API_KEY: (0, 5),
    ListGroupsRequest.API_KEY: (0, 4),
    ApiVersionsRequest.API_KEY: (0, 4),
    CreateTopicsRequest.API_KEY: (2, 7),
    DeleteTopicsRequest.API_KEY: (1, 5),  # v6: topics by id
    InitProducerIdRequest.API_KEY: (0, 5),
    OffsetForLeaderEpochRequest.API_KEY: (2, 4),
    AddPartitionsToTxnRequest.API_KEY: (0, 3),  # v4+: transactions v2
    AddOffsetsToTxnRequest.API_KEY: (0, 4),
    EndTxnRequest.API_KEY: (0, 4),  # v5: transactions v2
    TxnOffsetCommitRequest.API_KEY: (0, 4),  # v5: transactions v2
    DescribeConfigsRequest.API_KEY: (1, 4),
}

#: SaslHandshake, SaslAuthenticate: advertised by a cluster with users only (``WireCluster(users=...)``)
SASL_VERSIONS = {SaslHandshakeRequest.API_KEY: (0, 1), SaslAuthenticateRequest.API_KEY: (0, 2)}


def advertised(wire) -> dict:
    """api key -> (min version, max version) that ``wire``'s brokers advertise."""
    return {**SUPPORTED_VERSIONS, **SASL_VERSIONS} if wire.sasl is not None else SUPPORTED_VERSIONS


#: api key -> request class, for every API kafka-python knows (to name what we refuse)
REQUEST_CLASSES = {
    cls.API_KEY: cls
    for cls in (
        ProduceRequest,
        FetchRequest,
        ListOffsetsRequest,
        MetadataRequest,
        OffsetCommitRequest,
        OffsetFetchRequest,
        FindCoordinatorRequest,
        JoinGroupRequest,
        HeartbeatRequest,
        LeaveGroupRequest,
        SyncGroupRequest,
        DescribeGroupsRequest,
        ListGroupsRequest,
        ApiVersionsRequest,
        CreateTopicsRequest,
        DeleteTopicsRequest,
        InitProducerIdRequest,
        OffsetForLeaderEpochRequest,
        AddPartitionsToTxnRequest,
        AddOffsetsToTxnRequest,
        EndTxnRequest,
        TxnOffsetCommitRequest,
        DescribeConfigsRequest,
        SaslHandshakeRequest,
        SaslAuthenticateRequest,
    )
}


def api_versions(gw, req) -> None:
    _reply(
        gw,
        ApiVersionsResponse,
        error_code=0,
        api_keys=[
            {"api_key": key, "min_version": lo, "max_version": hi}
            for key, (lo, hi) in sorted(advertised(gw.wire).items())
        ],
        throttle_time_ms=0,
    )
