"""Message schemas kafka-python 3 does not ship, in the JSON shape its ``kafka.protocol``
machinery builds request/response classes from (``ApiMessage`` loads ``<ClassName>.json``
from the package its ``load_json`` names): our own field lists of Kafka's ConsumerGroupHeartbeat
(api key 68) and ConsumerGroupDescribe (69), and of the share group APIs (KIP-932):
ShareGroupHeartbeat (76), ShareGroupDescribe (77), ShareFetch (78), ShareAcknowledge (79) and
DescribeShareGroupOffsets (90), as
Kafka 4.3.1 speaks them (flexible versions throughout; the share APIs' versions and fields are
those of the 4.3.1 client jar's ``*Data.SCHEMAS``). Data, not code; tests/wire/test_consumer_group_protocol.py round-trips them.
And, copied from kafka-clients-4.4.0.jar's ``common/message/``: Kafka 4.4.0's
AlterShareGroupOffsets (91) and DeleteShareGroupOffsets (92), and its ApiVersionsRequest (v5
adds ClusterId and NodeId, KIP-1242; kafka-python 3.0.12 stops at v4), whose response has no
class here: v5's body is v4's, and a response class would replace kafka-python's own in its
process-wide response registry.
"""

from __future__ import annotations

import sys

from kafka.protocol.api_message import ApiMessage

_HERE = sys.modules[__name__]


class ApiVersionsRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]  # kafka-python's metaclass reads it
    pass


class ConsumerGroupHeartbeatRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]  # kafka-python's metaclass reads it
    pass


class ConsumerGroupHeartbeatResponse(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]  # kafka-python's metaclass reads it
    pass


class ConsumerGroupDescribeRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]  # kafka-python's metaclass reads it
    pass


class ConsumerGroupDescribeResponse(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]  # kafka-python's metaclass reads it
    pass


class ShareGroupHeartbeatRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]  # kafka-python's metaclass reads it
    pass


class ShareGroupHeartbeatResponse(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]  # kafka-python's metaclass reads it
    pass


class DescribeShareGroupOffsetsRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]  # kafka-python's metaclass reads it
    pass


class DescribeShareGroupOffsetsResponse(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]  # kafka-python's metaclass reads it
    pass


class ShareGroupDescribeRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]  # kafka-python's metaclass reads it
    pass


class ShareGroupDescribeResponse(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]  # kafka-python's metaclass reads it
    pass


class ShareFetchRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]  # kafka-python's metaclass reads it
    pass


class ShareFetchResponse(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]  # kafka-python's metaclass reads it
    pass


class ShareAcknowledgeRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]  # kafka-python's metaclass reads it
    pass


class ShareAcknowledgeResponse(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]  # kafka-python's metaclass reads it
    pass


class AlterShareGroupOffsetsRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]  # kafka-python's metaclass reads it
    pass


class AlterShareGroupOffsetsResponse(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]  # kafka-python's metaclass reads it
    pass


class DeleteShareGroupOffsetsRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]  # kafka-python's metaclass reads it
    pass


class DeleteShareGroupOffsetsResponse(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]  # kafka-python's metaclass reads it
    pass


__all__ = [
    "AlterShareGroupOffsetsRequest",
    "AlterShareGroupOffsetsResponse",
    "DeleteShareGroupOffsetsRequest",
    "DeleteShareGroupOffsetsResponse",
    "ApiVersionsRequest",
    "ConsumerGroupDescribeRequest",
    "ConsumerGroupDescribeResponse",
    "ConsumerGroupHeartbeatRequest",
    "ConsumerGroupHeartbeatResponse",
    "ShareAcknowledgeRequest",
    "ShareAcknowledgeResponse",
    "ShareFetchRequest",
    "ShareFetchResponse",
    "DescribeShareGroupOffsetsRequest",
    "DescribeShareGroupOffsetsResponse",
    "ShareGroupDescribeRequest",
    "ShareGroupDescribeResponse",
    "ShareGroupHeartbeatRequest",
    "ShareGroupHeartbeatResponse",
]
