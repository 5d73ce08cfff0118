"""ApiVersions asked by hand, the same way on the wire cluster (tests/wire/test_api_versions.py)
and on Kafka 4.4.0 (tests/real/test_api_versions_real.py): v5's ClusterId and NodeId check
(KIP-1242), and every API's advertised [min, max]."""

from __future__ import annotations

from kafka.protocol.api_message import ApiMessage
from kafka.protocol.metadata import ApiVersionsResponse, MetadataRequest, MetadataResponse

from course_lib.wire.apis.schemas import ApiVersionsRequest

from .client_probes import RawClient

#: what a v5 request names, by the cluster id and node id the broker itself reports in Metadata
V5_CASES = {
    "neither": lambda cluster_id, node_id: (None, -1),
    "this cluster and node": lambda cluster_id, node_id: (cluster_id, node_id),
    "another cluster": lambda cluster_id, node_id: (f"{cluster_id}-other", node_id),
    "another node": lambda cluster_id, node_id: (cluster_id, node_id + 100),
    "a cluster id only": lambda cluster_id, node_id: (cluster_id, -1),
    "a node id only": lambda cluster_id, node_id: (None, node_id),
}


def ask_api_versions(raw: RawClient, version: int, **fields) -> ApiMessage:
    """ApiVersions at ``version`` (v5: ``cluster_id``, ``node_id``) on ``raw``, and its answer."""
    request = ApiVersionsRequest(client_software_name="probe", client_software_version="1", **fields)
    frame = raw.request(request, version)
    # kafka-python decodes any ApiVersions answer with an error as v0 (the answer to an unsupported
    # version); Kafka answers a refused v5 at v5, whose body is v4's: decode it as v4
    return super(ApiVersionsResponse, ApiVersionsResponse).decode(frame, version=min(version, 4), header=True)


def api_versions_v5_answers(bootstrap: str) -> dict:
    """case -> (error code, ApiVersions' own [min, max] if listed, how many APIs listed), each
    case of :data:`V5_CASES` asked in turn on one connection to the first bootstrap broker (an
    answer closes nothing, so the next case is asked on the same connection)."""
    raw = RawClient(bootstrap)
    try:
        port = int(bootstrap.split(",")[0].rsplit(":", 1)[1])
        metadata = MetadataResponse.decode(raw.request(MetadataRequest(topics=[]), 12), version=12, header=True)
        node_id = next(b.node_id for b in metadata.brokers if b.port == port)
        answers = {}
        for case, names in V5_CASES.items():
            cluster_id, node = names(metadata.cluster_id, node_id)
            answer = ask_api_versions(raw, 5, cluster_id=cluster_id, node_id=node)
            own = next(((k.min_version, k.max_version) for k in answer.api_keys if k.api_key == 18), None)
            answers[case] = (answer.error_code, own, "all" if len(answer.api_keys) > 1 else len(answer.api_keys))
        return answers
    finally:
        raw.close()


def advertised_versions(bootstrap: str) -> dict[int, tuple[int, int]]:
    """api key -> (min, max) as the first bootstrap broker advertises them (ApiVersions v4)."""
    raw = RawClient(bootstrap)
    try:
        answer = ask_api_versions(raw, 4)
        assert answer.error_code == 0, answer
        return {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}
    finally:
        raw.close()
