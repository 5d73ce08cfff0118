"""What the wire front end does with input no well-behaved client sends: unsupported APIs and
versions get Kafka's UNSUPPORTED_VERSION, malformed frames close that connection only, and the
server keeps serving everyone else."""

import logging
import socket
import struct
import threading

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka import KafkaProducer
from kafka.protocol.admin import UpdateFeaturesResponse
from kafka.protocol.consumer import FetchRequest
from kafka.protocol.metadata import ApiVersionsResponse, MetadataRequest, MetadataResponse

from course_lib.wire import WireCluster

from .client_probes import RawClient
from .conftest import open_fds, wire_threads


def test_unsupported_api_version_answers_unsupported_version_and_logs_once(wire, caplog):
    raw, other = RawClient(wire.bootstrap_servers), RawClient(wire.bootstrap_servers)
    try:
        with caplog.at_level(logging.WARNING, logger="course_lib.wire"):
            # ApiVersions at a version from the future: a v0 answer listing what is supported,
            # so the client can retry at a version both know (KIP-511)
            raw.send_bytes(struct.pack(">hhih", 18, 9, 5, -1))
            versions = ApiVersionsResponse.decode(raw.read_frame(), version=0, header=True)
            assert versions.error_code == 35 and versions.header.correlation_id == 5
            assert {k.api_key for k in versions.api_keys} >= {0, 1, 3, 18}
            # the connection still works after the refusal
            frame = raw.request(MetadataRequest(topics=None), 1)
            assert MetadataResponse.decode(frame, version=1, header=True).brokers
            # Fetch above the highest version advertised (18): no answer can be built in a format
            # the server does not know, so that connection (only) is closed
            request = FetchRequest(max_wait_ms=0, min_bytes=1, topics=[])
            request.API_VERSION = 18
            request.with_header(correlation_id=7, client_id="raw")
            payload = bytearray(request.encode(header=True, framed=False))
            payload[2:4] = struct.pack(">h", 19)
            other.send_bytes(bytes(payload))
            other.assert_closed()
            frame = raw.request(MetadataRequest(topics=None), 1)
            assert MetadataResponse.decode(frame, version=1, header=True).brokers
    finally:
        raw.close()
        other.close()
    lines = [r.getMessage() for r in caplog.records if "unsupported" in r.getMessage()]
    assert len(lines) == 2 and "ApiVersionsRequest v9" in lines[0] and "FetchRequest v19" in lines[1]


def test_unknown_api_key_closes_only_that_connection(wire, caplog):
    bad, good = RawClient(wire.bootstrap_servers), RawClient(wire.bootstrap_servers)
    try:
        with caplog.at_level(logging.WARNING, logger="course_lib.wire"):
            # api key 57 (UpdateFeatures) is known to kafka-python but not implemented: its
            # answer has a top-level error code, which says UNSUPPORTED_VERSION
            bad.send_bytes(struct.pack(">hhih", 57, 0, 1, -1) + b"\x00" * 8)
            assert UpdateFeaturesResponse.decode(bad.read_frame(), version=0, header=True).error_code == 35
            # api key 99 exists nowhere: no answer can be built, the connection closes
            bad.send_bytes(struct.pack(">hhih", 99, 0, 2, -1))
            bad.assert_closed()
        frame = good.request(MetadataRequest(topics=None), 1)
        assert MetadataResponse.decode(frame, version=1, header=True).brokers
    finally:
        bad.close()
        good.close()
    logged = [r.getMessage() for r in caplog.records if "unsupported" in r.getMessage()]
    assert "UpdateFeaturesRequest v0" in logged[0] and "api key 99 v0" in logged[1]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(garbage=st.binary(min_size=0, max_size=200), api_key=st.sampled_from([0, 1, 3, 8, 11, 18, 22, 99]))
def test_fuzzed_frames_never_kill_the_server(wire, garbage, api_key):
    """Random bodies behind valid-looking headers: each connection gets an answer or is closed;
    the server threads live on and a well-formed request still succeeds."""
    raw = RawClient(wire.bootstrap_servers)
    try:
        raw.send_bytes(struct.pack(">hhi", api_key, 3, 7) + garbage)
        raw.answered_or_closed()  # either is fine; silence is not
    finally:
        raw.close()
    assert len(wire_threads()) == 2
    check = RawClient(wire.bootstrap_servers)
    try:
        frame = check.request(MetadataRequest(topics=None), 1)
        assert MetadataResponse.decode(frame, version=1, header=True).brokers
    finally:
        check.close()


def test_a_huge_frame_size_closes_the_connection(wire):
    raw = RawClient(wire.bootstrap_servers)
    try:
        raw.sock.sendall(struct.pack(">i", 2**31 - 1))
        raw.assert_closed()
    finally:
        raw.close()


def test_a_port_in_use_is_replaced_by_a_free_one(no_leaks):
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen(1)
    taken = blocker.getsockname()[1]
    try:
        with WireCluster(brokers=1, seed=1, base_port=taken) as wire:
            assert wire.ports[1] != taken
            producer = KafkaProducer(bootstrap_servers=wire.bootstrap_servers)
            producer.close()
    finally:
        blocker.close()


def test_stop_ends_every_thread_and_socket():
    before_threads, before_fds = set(threading.enumerate()), open_fds()
    wire = WireCluster(brokers=3, seed=2).start()
    clients = [RawClient(wire.bootstrap_servers) for _ in range(3)]
    assert len(wire_threads()) == 2 and open_fds() > before_fds
    wire.stop()
    for c in clients:
        c.close()
    assert set(threading.enumerate()) <= before_threads
    assert open_fds() == before_fds


def test_a_cluster_never_started_leaves_nothing_open():
    before = open_fds()
    WireCluster(brokers=1, seed=1).stop()
    assert open_fds() == before
