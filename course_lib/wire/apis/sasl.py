"""SaslHandshake and SaslAuthenticate: a login on a cluster with users (:mod:`course_lib.wire.sasl`).

Answered by the broker itself (one network latency, held while the broker is paused, gone with
a crash), as Kafka's socket server authenticates before any request reaches a handler. On a
connection whose login is complete they get what Kafka's ``KafkaApis`` answers:
``ILLEGAL_SASL_STATE``.
"""

from __future__ import annotations

import struct

from kafka import errors as Errors
from kafka.protocol.sasl import SaslAuthenticateResponse, SaslHandshakeResponse

from ..sasl import AuthenticationFailed, BareToken, fail_later
from .common import _reply, build


def sasl_handshake(gw, req) -> None:
    auth = gw.authenticator
    if auth is None or auth.complete:
        return _reply(gw, SaslHandshakeResponse, error_code=Errors.IllegalSaslStateError.errno, mechanisms=[])
    enabled = list(auth.config.mechanisms)
    if auth.handshake(req.mechanism, gw.version):
        return _reply(gw, SaslHandshakeResponse, error_code=0, mechanisms=enabled)
    error = Errors.UnsupportedSaslMechanismError.errno
    fail_later(gw, lambda: build(SaslHandshakeResponse, gw.version, error_code=error, mechanisms=enabled))


def sasl_authenticate(gw, req) -> None:
    auth = gw.authenticator
    if auth is None or auth.complete:
        return _reply(
            gw,
            SaslAuthenticateResponse,
            error_code=Errors.IllegalSaslStateError.errno,
            error_message="SaslAuthenticate request received after successful authentication",
            auth_bytes=b"",
            session_lifetime_ms=0,
        )
    token = req.data if isinstance(req, BareToken) else req.auth_bytes
    try:
        answer = auth.authenticate(bytes(token))
    except AuthenticationFailed as failed:
        if isinstance(req, BareToken):  # v0 framing has no way to say why: Kafka just closes
            return fail_later(gw)
        message = str(failed)
        return fail_later(
            gw,
            lambda: build(
                SaslAuthenticateResponse,
                gw.version,
                error_code=Errors.SaslAuthenticationFailedError.errno,
                error_message=message,
                auth_bytes=b"",
                session_lifetime_ms=0,
            ),
        )
    if isinstance(req, BareToken):  # a size-prefixed bare token back (even an empty one)
        gw.wire.reactor.write(gw.conn, struct.pack(">i", len(answer)) + answer)
        return gw.no_reply()
    # no session lifetime: connections.max.reauth.ms is 0 (Kafka's default), no re-authentication
    _reply(gw, SaslAuthenticateResponse, error_code=0, error_message=None, auth_bytes=answer, session_lifetime_ms=0)
