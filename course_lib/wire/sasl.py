"""SASL on the wire front end: who may talk to the simulated brokers (SASL/PLAIN, SASL/SCRAM).

A :class:`~course_lib.wire.WireCluster` given ``users`` makes every listener SASL_PLAINTEXT, as
the course's workshop cluster is (:mod:`course_lib.real.security`), so a learner's
``connect()`` and a wrong password can be shown without Java:

>>> from kafka import KafkaProducer
>>> from course_lib.wire import WireCluster
>>> with WireCluster(brokers=1, users={"ann": "ann-pw"}) as wire:
...     topic = wire.create_topic("orders")
...     settings = wire.sasl.client_config("ann")
...     producer = KafkaProducer(bootstrap_servers=wire.bootstrap_servers, **settings)
...     producer.send("orders", b"hello").get(timeout=10).offset
...     producer.close()
0
>>> sorted(settings)
['sasl_mechanism', 'sasl_plain_password', 'sasl_plain_username', 'security_protocol']

Each connection has an :class:`Authenticator`, the state machine of Kafka's
``SaslServerAuthenticator``: before a login completes only ApiVersions (once, first),
SaslHandshake and then SaslAuthenticate are taken; anything else closes the connection without
an answer. A mechanism the cluster does not enable gets ``UNSUPPORTED_SASL_MECHANISM`` with the
enabled list, wrong credentials ``SASL_AUTHENTICATION_FAILED`` with Kafka's own message, then
the close; a failed login is answered and closed ``connection.failed.authentication.delay.ms``
(100 ms) late, as Kafka does to slow guessing down. SaslHandshake v0 (Kafka 0.10's framing: the
tokens that follow are bare, with no request header) is served too.

SCRAM's server side is the ``scramp`` library; like Kafka, the cluster keeps each user's SCRAM
credential (salt, stored key, server key, 4096 iterations), not the password. Authorization is
off unless the cluster is given an authorizer, as the workshop's Kafka is
(``config={"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
"super.users": "User:admin", "allow.everyone.if.no.acl.found": "false"}``): then each user may do
what the ACLs allow (:mod:`course_lib.wire.authorization`, :mod:`course_lib.broker.acls`).
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass
from typing import Iterable, Mapping

from kafka.protocol.api_header import RequestHeader
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.metadata import ApiVersionsRequest
from kafka.protocol.sasl import SaslAuthenticateRequest, SaslHandshakeRequest

from .api_versions_request import names_half_a_node

log = logging.getLogger("course_lib.wire")

#: what a wire cluster can enable (Kafka's GSSAPI and OAUTHBEARER need a KDC / token issuer)
MECHANISMS = ("SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN")
#: enabled unless told otherwise: the workshop cluster's SCRAM-SHA-512, and PLAIN
DEFAULT_MECHANISMS = ("SCRAM-SHA-512", "PLAIN")
#: Kafka's connection.failed.authentication.delay.ms default: a failed login's answer and close wait this long
FAILED_AUTHENTICATION_DELAY_MS = 100
#: Kafka's default (and minimum) iteration count of a SCRAM credential (kafka-configs --add-config)
SCRAM_ITERATIONS = 4096


class SaslConfigError(ValueError):
    """Users or mechanisms a wire cluster cannot take (the message says what to change)."""


class State(enum.Enum):
    """SaslServerAuthenticator's states (the ones a client can reach)."""

    HANDSHAKE_OR_VERSIONS_REQUEST = "handshake or versions"
    HANDSHAKE_REQUEST = "handshake"
    AUTHENTICATE = "authenticate"
    COMPLETE = "complete"
    FAILED = "failed"


class AuthenticationFailed(Exception):
    """A login refused: the message is what Kafka tells the client."""


class SaslConfig:
    """The cluster's side of SASL: the enabled mechanisms and every user's credentials.

    ``users`` maps user names to passwords; ``mechanisms`` are the enabled ones, in the order
    the SaslHandshake answer lists them.
    """

    def __init__(self, users: Mapping[str, str], mechanisms: Iterable[str] = DEFAULT_MECHANISMS):
        if not isinstance(users, Mapping) or not users:
            raise SaslConfigError(
                f"users must map at least one user name to a password, e.g. {{'ann': 'pw'}}; got {users!r}"
            )
        for name, password in users.items():
            if not isinstance(name, str) or not name or not isinstance(password, str) or not password:
                raise SaslConfigError(f"user {name!r}: the user name and the password must be non-empty strings")
        if isinstance(mechanisms, str):
            mechanisms = (mechanisms,)
        self.mechanisms = tuple(mechanisms)
        unknown = [m for m in self.mechanisms if m not in MECHANISMS]
        if unknown or not self.mechanisms:
            raise SaslConfigError(
                f"SASL mechanisms {list(self.mechanisms)!r}: choose one or more of {', '.join(MECHANISMS)}"
            )
        self._passwords = dict(users)  # PLAIN checks the password itself (Kafka's JAAS user_<name>)
        self._scram = {m: _scram_credentials(m, users) for m in self.mechanisms if m.startswith("SCRAM-")}

    def __repr__(self) -> str:
        return f"<SaslConfig users={sorted(self._passwords)} mechanisms={list(self.mechanisms)}>"

    @property
    def users(self) -> list[str]:
        return sorted(self._passwords)

    def client_config(self, user: str, mechanism: str | None = None) -> dict:
        """kafka-python keyword arguments that log ``user`` in (the first enabled mechanism unless
        ``mechanism`` is given); add ``bootstrap_servers``."""
        if user not in self._passwords:
            raise SaslConfigError(f"no user {user!r} on this cluster; its users are {', '.join(self.users)}")
        mechanism = mechanism or self.mechanisms[0]
        if mechanism not in self.mechanisms:
            raise SaslConfigError(f"mechanism {mechanism!r} is not enabled here; enabled: {', '.join(self.mechanisms)}")
        return {
            "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": mechanism,
            "sasl_plain_username": user,
            "sasl_plain_password": self._passwords[user],
        }

    def authenticator(self) -> "Authenticator":
        return Authenticator(self)

    def exchange(self, mechanism: str) -> "_Exchange":
        if mechanism == "PLAIN":
            return _PlainExchange(self._passwords)
        return _ScramExchange(mechanism, self._scram[mechanism])


def _scram_credentials(mechanism: str, users: Mapping[str, str]) -> dict:
    from scramp import ScramMechanism

    m = ScramMechanism(mechanism)
    return {name: m.make_auth_info(password, iteration_count=SCRAM_ITERATIONS) for name, password in users.items()}


@dataclass
class BareToken:
    """A SASL token after SaslHandshake v0: a frame with no request header (answered likewise)."""

    data: bytes

    def __post_init__(self) -> None:
        # the gateway queues (header, request) pairs; a bare token rides as a SaslAuthenticate
        self.header = RequestHeader(
            request_api_key=SaslAuthenticateRequest.API_KEY, request_api_version=0, correlation_id=0, client_id=None
        )


def bare_token(conn, frame: memoryview) -> BareToken | None:
    """On the reactor thread: ``frame`` as a bare SASL token if this connection's handshake was
    v0, else None (the flag is set before the handshake's answer is written, and a client sends
    its token only after reading that answer)."""
    auth = getattr(conn.gateway, "authenticator", None)
    if auth is None or not auth.bare_tokens:
        return None
    return BareToken(bytes(frame))


def fail_later(gw, answer=None) -> None:
    """A failed login: the answer ``answer()`` builds (if any) and the close right behind it,
    after Kafka's delay; on the broker's timer, so a paused broker holds it and a crash drops it
    (the connection goes anyway). kafka-python 3.0.12 reads the two at once and drops the answer
    (it sees ``KafkaConnectionError('socket disconnected')``), against Kafka as here."""

    def fail() -> None:
        if answer is None:
            gw.close()
        else:
            gw.reply_and_close(answer())

    broker = gw.wire.cluster.brokers[gw.broker_id]
    broker.schedule_timer(FAILED_AUTHENTICATION_DELAY_MS, fail)


class Authenticator:
    """One connection's login (runs on the simulation thread, request by request, in order)."""

    def __init__(self, config: SaslConfig):
        self.config = config
        self.state = State.HANDSHAKE_OR_VERSIONS_REQUEST
        self.mechanism: str | None = None
        self.principal: str | None = None
        self.bare_tokens = False  # SaslHandshake v0: tokens come without a request header
        self._exchange: _Exchange | None = None

    def __repr__(self) -> str:
        return f"<Authenticator {self.state.value} {self.mechanism or ''} {self.principal or ''}>"

    @property
    def complete(self) -> bool:
        return self.state is State.COMPLETE

    def admit(self, gw, header, request) -> bool:
        """Whether ``request`` may be handled now; if not, the connection is closed without an
        answer: after Kafka's failed-login delay for a request of the wrong API
        (``IllegalSaslStateException``), at once for a second ApiVersions or an unsupported
        version of the expected one (errors that are not authentication failures)."""
        if self.state is State.COMPLETE:
            return True
        key = header.request_api_key
        if self.state is State.HANDSHAKE_OR_VERSIONS_REQUEST and key == ApiVersionsRequest.API_KEY:
            # an unsupported version (not decoded) or an invalid request is answered with the state
            # kept (SaslServerAuthenticator.handleApiVersionsRequest)
            if isinstance(request, ApiMessage) and not names_half_a_node(request):
                self.state = State.HANDSHAKE_REQUEST
            return True
        if self.state is State.AUTHENTICATE:
            expected, allowed = SaslAuthenticateRequest.API_KEY, type(request) in (SaslAuthenticateRequest, BareToken)
        else:
            expected, allowed = SaslHandshakeRequest.API_KEY, type(request) is SaslHandshakeRequest
        if allowed:
            return True
        log.warning(
            "wire: %s sent api key %d v%d before completing its SASL login (%s): closing the connection",
            gw.node_id,
            key,
            header.request_api_version,
            self.state.value,
        )
        # Kafka also answers a wrong API during AUTHENTICATE with its ILLEGAL_SASL_STATE error
        # response first; no client sends one, so here the connection is only closed
        at_once = key == expected or key == ApiVersionsRequest.API_KEY and self.state is State.HANDSHAKE_REQUEST
        self.state = State.FAILED
        if at_once:
            gw.close()
        else:
            fail_later(gw)
        return False

    def handshake(self, mechanism: str, version: int) -> bool:
        """SaslHandshake: whether ``mechanism`` is enabled (if not, the login has failed)."""
        if mechanism not in self.config.mechanisms:
            log.info("wire: SASL mechanism %r asked for, enabled: %s", mechanism, self.config.mechanisms)
            self.state = State.FAILED
            return False
        self.mechanism = mechanism
        self._exchange = self.config.exchange(mechanism)
        self.bare_tokens = version == 0
        self.state = State.AUTHENTICATE
        return True

    def authenticate(self, token: bytes) -> bytes:
        """One SaslAuthenticate: the server's token, or :class:`AuthenticationFailed` with
        Kafka's message for the client."""
        assert self._exchange is not None and self.mechanism is not None
        try:
            answer = self._exchange.evaluate(token)
        except AuthenticationFailed:
            self.state = State.FAILED
            raise
        except Exception as exc:  # noqa: BLE001 - Kafka's SaslException: the reason stays here
            self.state = State.FAILED
            log.info("wire: SASL %s login failed: %s", self.mechanism, exc)
            raise AuthenticationFailed(
                "Authentication failed during authentication due to invalid credentials with SASL mechanism "
                + self.mechanism
            ) from exc
        if self._exchange.complete:
            self.state = State.COMPLETE
            self.principal = self._exchange.user
            self.bare_tokens = False
        return answer


class _Exchange:
    complete = False
    user: str | None = None

    def evaluate(self, token: bytes) -> bytes:
        raise NotImplementedError


class _PlainExchange(_Exchange):
    """RFC 4616 as Kafka's ``PlainSaslServer``: ``[authzid] NUL user NUL password`` in one token;
    its failures are ``SaslAuthenticationException``s whose message the client gets."""

    def __init__(self, passwords: Mapping[str, str]):
        self._passwords = passwords

    def evaluate(self, token: bytes) -> bytes:
        parts = token.decode("utf-8", errors="replace").split("\0")
        if len(parts) != 3:
            raise AuthenticationFailed(f"Invalid SASL/PLAIN response: expected 3 tokens, got {min(len(parts), 4)}")
        authzid, user, password = parts
        if not user:
            raise AuthenticationFailed("Authentication failed: username not specified")
        if not password:
            raise AuthenticationFailed("Authentication failed: password not specified")
        if self._passwords.get(user) != password:
            raise AuthenticationFailed("Authentication failed: Invalid username or password")
        if authzid and authzid != user:
            raise AuthenticationFailed(
                "Authentication failed: Client requested an authorization id that is different from username"
            )
        self.user, self.complete = user, True
        return b""


class _ScramExchange(_Exchange):
    """RFC 5802 (client-first, server-first, client-final, server-final) with scramp's server;
    an unknown user fails at the first message and a wrong proof at the final one, both with
    Kafka's generic message (``ScramSaslServer`` throws ``SaslException``s)."""

    def __init__(self, mechanism: str, credentials: dict):
        from scramp import ScramMechanism

        self._credentials = credentials
        self._server = ScramMechanism(mechanism).make_server(self._credential)
        self._step = 0
        self._asked: str | None = None

    def _credential(self, user: str):
        """scramp asks for the user's credential (a KeyError: no such user)."""
        self._asked = user
        return self._credentials[user]

    def evaluate(self, token: bytes) -> bytes:
        message = token.decode("utf-8")
        if self._step == 0:
            self._server.set_client_first(message)
            self._step = 1
            return self._server.get_server_first().encode("utf-8")
        if self._step == 1:
            self._server.set_client_final(message)
            answer = self._server.get_server_final().encode("utf-8")
            self.user, self.complete, self._step = self._asked, True, 2
            return answer
        raise AuthenticationFailed("Unexpected challenge in Sasl server state COMPLETE")
