"""Authentication and authorization for a :class:`~course_lib.real.cluster.LocalCluster`.

A workshop shares one cluster between many learners, so the cluster must know who is who
(SASL SCRAM-SHA-512 on the client listener) and what each may touch (KRaft's
``StandardAuthorizer`` with ACLs; nothing is allowed unless an ACL says so).

Why the other listeners stay PLAINTEXT: replication and the KRaft quorum only listen on
127.0.0.1 and are never handed to learners; their principal is ``User:ANONYMOUS``, which
therefore has to be a super user (brokers and controllers must be allowed to do everything).
A real multi-host cluster would authenticate those listeners too (that is the instructor's
platform, e.g. Strimzi, not this module).

SCRAM users live in the cluster metadata; in KRaft the first one (the instructor, needed to
create all others) must exist before any broker starts, so it is written at *format* time
(``kafka-storage format --add-scram 'SCRAM-SHA-512=[name=...,password=...]'``, KIP-900).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field

MECHANISM = "SCRAM-SHA-512"
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
# Principal of the unauthenticated replication/controller listeners (see module docstring).
INTERNAL_PRINCIPAL = "User:ANONYMOUS"
# SCRAM user names are written into a ``[name=...,password=...]`` format argument and into
# ACL principals: keep them to characters that need no escaping anywhere.
_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


class SecurityConfigError(ValueError):
    """A user name or password that the broker tools cannot take as is."""


def check_user_name(name: str, what: str = "user name") -> str:
    if not isinstance(name, str) or not _SAFE.match(name):
        raise SecurityConfigError(
            f"{what} {name!r} is not allowed: use 1-63 letters, digits, '_', '.' or '-', "
            f"starting with a letter or digit"
        )
    return name


@dataclass(frozen=True)
class ClusterAuth:
    """Switch a LocalCluster to SASL SCRAM-SHA-512 + StandardAuthorizer.

    ``admin_user`` is the instructor: a super user, created at format time.
    """

    admin_user: str = "instructor"
    admin_password: str = field(default_factory=lambda: secrets.token_urlsafe(18))

    def __post_init__(self) -> None:
        check_user_name(self.admin_user, "instructor user name")
        if not self.admin_password or any(c in self.admin_password for c in ",[]=\"'"):
            raise SecurityConfigError(
                "the instructor password must be non-empty and contain none of , [ ] = quotes "
                "(they break the format tool's --add-scram syntax)"
            )

    # ---- broker side -------------------------------------------------------------------
    def listener_protocols(self) -> str:
        """``listener.security.protocol.map`` value: SASL only where learners connect."""
        return "CLIENT:SASL_PLAINTEXT,REPLICATION:PLAINTEXT,CONTROLLER:PLAINTEXT"

    def broker_properties(self) -> dict[str, str]:
        return {
            "sasl.enabled.mechanisms": MECHANISM,
            # The broker side of SCRAM needs a JAAS login module but no secrets (they are in
            # the cluster metadata); per listener so no JVM-wide JAAS file is needed.
            "listener.name.client.scram-sha-512.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
            "authorizer.class.name": AUTHORIZER,
            "super.users": f"User:{self.admin_user};{INTERNAL_PRINCIPAL}",
            # Deny by default: a learner with no ACL on a resource gets an authorization error.
            "allow.everyone.if.no.acl.found": "false",
        }

    def format_arguments(self) -> list[str]:
        """Extra ``kafka-storage format`` arguments that create the instructor user."""
        return ["--add-scram", f"{MECHANISM}=[name={self.admin_user},password={self.admin_password}]"]

    # ---- client side -------------------------------------------------------------------
    def admin_client_kwargs(self) -> dict:
        return client_kwargs(self.admin_user, self.admin_password)


def client_kwargs(user: str, password: str) -> dict:
    """kafka-python keyword arguments for a SCRAM-SHA-512 client over plaintext TCP."""
    return {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": MECHANISM,
        "sasl_plain_username": user,
        "sasl_plain_password": password,
    }
