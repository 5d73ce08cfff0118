"""Clear errors for a learner on a shared, authenticated cluster.

Kafka answers a learner who touches a resource outside their ACLs with
``TopicAuthorizationFailedError`` (and friends) - a traceback that does not say *whose* resource
it was or what the learner may use. :func:`explain` turns those into :class:`AccessDenied`,
which names the resource and the learner's own prefix; :func:`explain_login` does the same for a
login the cluster refused (wrong password, unknown user, SASL against a plaintext listener).

The clients that :class:`~course_lib.real.connect.RemoteCluster` builds
(:meth:`~course_lib.real.connect.RemoteCluster.producer`, ``consumer``, ``admin``) translate
their errors themselves; :func:`explained` is the context manager for any other code.
"""

from __future__ import annotations

import logging
import sys
from contextlib import contextmanager
from typing import Iterator

from kafka import errors as kerr

#: kafka-python's error -> the kind of resource a learner was refused
_RESOURCE_OF = {
    kerr.TopicAuthorizationFailedError: "topic",
    kerr.GroupAuthorizationFailedError: "consumer group",
    kerr.TransactionalIdAuthorizationFailedError: "transactional id",
    kerr.ClusterAuthorizationFailedError: "cluster-wide operation",
}
AUTHORIZATION_ERRORS = tuple(_RESOURCE_OF)
_KEYWORD = {"topic": "topic", "consumer group": "group", "transactional id": "transactional_id"}


class AccessDenied(PermissionError):
    """The cluster refused a learner a resource that is not under their prefix.

    ``resource_type`` ('topic', 'consumer group', 'transactional id', ...), ``resource`` (its
    name, if known), ``prefix`` (what the learner may use) and ``cause`` (Kafka's error).
    """

    def __init__(self, message: str, resource_type: str, resource: str | None, prefix: str, cause: BaseException):
        super().__init__(message)
        self.resource_type, self.resource, self.prefix, self.cause = resource_type, resource, prefix, cause


class LoginFailed(ConnectionError):
    """The cluster did not accept the learner's credentials (or did not speak SASL at all)."""


def _names_in(exc: BaseException) -> list[str]:
    """Resource names kafka-python put in the error (a set of topics, or a string), if any."""
    names: list[str] = []
    for arg in exc.args:
        if isinstance(arg, (set, frozenset, list, tuple)):
            names += sorted(str(a) for a in arg)
        elif isinstance(arg, str) and arg and not any(c.isspace() for c in arg):
            names.append(arg)  # a bare name (a group id); longer texts are request dumps
    return names


def explain(exc: BaseException, *, user: str | None, prefix: str, **used: str | None) -> AccessDenied:
    """An :class:`AccessDenied` for Kafka's authorization error ``exc``.

    ``used``: the names the caller was using (``topic=``, ``group=``, ``transactional_id=``);
    the one of the refused kind names the resource when the error itself carries no name.
    """
    kind = next((v for k, v in _RESOURCE_OF.items() if isinstance(exc, k)), "resource")
    resource = used.get(_KEYWORD.get(kind, ""))
    names = _names_in(exc) or ([resource] if resource else [])
    what = f"{kind} {', '.join(repr(n) for n in names)}" if names else f"this {kind}"
    who = f"user {user!r}" if user else "this client"
    mine = f"{prefix}." if prefix and not prefix.endswith(".") else prefix
    if kind == "cluster-wide operation":
        hint = "cluster-wide operations are the instructor's; learners only touch their own names"
    else:
        hint = (
            f"you may only use topics, consumer groups and transactional ids whose names start "
            f"with {mine!r} - use kafka.topic(...), kafka.group_id(...), kafka.transactional_id(...)"
        )
    return AccessDenied(
        f"The cluster refused {who} access to {what}: it is not yours ({hint}). Kafka said: {type(exc).__name__}.",
        kind,
        names[0] if names else resource,
        mine,
        exc,
    )


def explain_login(
    exc: BaseException, *, user: str | None, bootstrap_servers: str, sasl_started: bool = False
) -> LoginFailed:
    """A :class:`LoginFailed` for a connection the cluster refused or never completed
    (``sasl_started``: the broker answered and a SASL exchange began before it failed)."""
    if isinstance(exc, kerr.SaslAuthenticationFailedError) or (user and sasl_started):
        why = (
            f"the cluster rejected the login of user {user!r}: wrong user name or password. Check "
            f"KAFKA_SASL_USERNAME / KAFKA_SASL_PASSWORD (or your connection file) against what "
            f"your instructor gave you"
        )
    elif isinstance(exc, kerr.UnsupportedSaslMechanismError):
        why = "the cluster does not offer this SASL mechanism; check KAFKA_SASL_MECHANISM with your instructor"
    elif user:
        why = (
            f"no broker at {bootstrap_servers} completed a SASL login for user {user!r}: the address "
            f"is wrong, the cluster is down, that listener does not use SASL, or the password is wrong"
        )
    else:
        why = (
            f"no broker answered at {bootstrap_servers}: the address is wrong or the cluster is down "
            f"(if it needs a login, set KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD)"
        )
    return LoginFailed(f"Cannot connect to Kafka: {why}. Kafka said: {exc}")


#: errors that mean "we never got a working, authenticated connection"
LOGIN_ERRORS = (
    kerr.SaslAuthenticationFailedError,
    kerr.UnsupportedSaslMechanismError,
    kerr.KafkaConnectionError,
)


class _LoginWatch(logging.Handler):
    """Collects the login errors kafka-python only logs: with a wrong password it keeps retrying
    the bootstrap and finally raises a bare ``KafkaTimeoutError('Unable to bootstrap ...')``;
    the ``SaslAuthenticationFailedError`` behind it is in the log records' arguments.
    (Any client of the process logging one at the same time is seen too: a heuristic that is
    only used to word the error better.)"""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen: list[BaseException] = []
        #: a SASL exchange began (kafka-python warns about credentials over plaintext): the
        #: broker is there and speaks SASL, so a bootstrap failure after it is the login's
        self.sasl_started = False

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith("kafka.net.sasl"):
            self.sasl_started = True
        args = record.args if isinstance(record.args, tuple) else ()
        self.seen += [
            a for a in args if isinstance(a, (kerr.SaslAuthenticationFailedError, kerr.UnsupportedSaslMechanismError))
        ]


def _bootstrap_failed(exc: BaseException) -> bool:
    return isinstance(exc, kerr.KafkaTimeoutError) and "bootstrap" in str(exc).lower()


@contextmanager
def explained(
    user: str | None, prefix: str, bootstrap_servers: str | None = None, **used: str | None
) -> Iterator[None]:
    """Re-raise Kafka's authorization (and, with ``bootstrap_servers``, login) errors as
    :class:`AccessDenied` / :class:`LoginFailed`; Kafka's error stays in ``.cause`` /
    ``__cause__`` but the learner's traceback ends with the sentence that says what to do."""
    watch = _LoginWatch()
    kafka_log = logging.getLogger("kafka")
    if bootstrap_servers is not None:
        kafka_log.addHandler(watch)
    try:
        yield
    except AUTHORIZATION_ERRORS as e:
        raise explain(e, user=user, prefix=prefix, **used) from e
    except (*LOGIN_ERRORS, kerr.KafkaTimeoutError) as e:
        if bootstrap_servers is None or not (isinstance(e, LOGIN_ERRORS) or _bootstrap_failed(e)):
            raise
        cause = watch.seen[-1] if watch.seen and not isinstance(e, kerr.SaslAuthenticationFailedError) else e
        raise explain_login(
            cause, user=user, bootstrap_servers=bootstrap_servers, sasl_started=watch.sasl_started
        ) from e
    finally:
        kafka_log.removeHandler(watch)


def show_in_notebook(user: str | None, prefix: str) -> bool:
    """In a Jupyter kernel: show Kafka's authorization errors raised by *any* client (also a
    learner's own ``KafkaProducer(**kafka.client_config())``) as the :class:`AccessDenied`
    sentence instead of a raw traceback. Returns whether a kernel was there to hook into."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    shell.set_custom_exc(AUTHORIZATION_ERRORS, notebook_handler(user, prefix))
    return True


def notebook_handler(user: str | None, prefix: str):
    """The IPython custom exception handler :func:`show_in_notebook` installs."""

    def handler(shell, etype, value, tb, tb_offset=None):
        denied = explain(value, user=user, prefix=prefix)
        print(f"AccessDenied: {denied}", file=sys.stderr)  # a kernel shows stderr in the cell
        return None

    return handler
