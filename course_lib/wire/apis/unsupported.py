"""What is not implemented: a request for an API or version this front end refuses, and its answer."""

from __future__ import annotations

from kafka import errors as Errors
from kafka.protocol.api_header import RequestHeader, ResponseClassRegistry
from kafka.protocol.api_key import ApiKey
from kafka.protocol.metadata import ApiVersionsResponse

from .api_versions import advertised
from .common import build, log


class Unsupported:
    """A request for an API or version this front end does not implement (answered in order)."""

    def __init__(self, header):
        self.header = header


def loose_header(frame: memoryview, api_key: int, version: int):
    """The header of a request we will not decode: key, version, correlation id (and the client
    id when it reads), enough to answer UNSUPPORTED_VERSION."""
    correlation_id = int.from_bytes(frame[4:8], "big", signed=True)
    return RequestHeader(
        request_api_key=api_key, request_api_version=version, correlation_id=correlation_id, client_id=None
    )


def unsupported_answer(gw, header) -> None:
    """Kafka's answer to an API or version it does not support: ApiVersions gets a v0 answer
    with UNSUPPORTED_VERSION and the versions it does support (so the client can retry); other
    APIs get UNSUPPORTED_VERSION as their top-level error where they have one, else the
    connection is closed (Kafka cannot build an answer for a version it does not know)."""
    key, version = header.request_api_key, header.request_api_version
    try:
        name = f"{ApiKey(key).name}Request"
    except ValueError:  # a key Kafka does not have either
        name = f"api key {key}"
    log.warning("wire: unsupported %s v%d from %s", name, version, gw.node_id)
    error = Errors.UnsupportedVersionError.errno
    if key == ApiKey.ApiVersions:
        response = build(
            ApiVersionsResponse,
            0,
            error_code=error,
            api_keys=[
                {"api_key": k, "min_version": lo, "max_version": hi}
                for k, (lo, hi) in sorted(advertised(gw.wire).items())
            ],
        )
        return gw.reply_as(response, header, 0)
    response_cls = ResponseClassRegistry._response_class_registry.get(key)
    if response_cls is not None:
        response_cls = response_cls[None]  # the registry may hold a versioned class (FetchResponse_v12)
    if (
        response_cls is not None
        and 0 <= version <= response_cls.max_version
        and "error_code" in response_cls._struct.fields
    ):
        return gw.reply_as(build(response_cls, version, error_code=error), header, version)
    gw.close()
