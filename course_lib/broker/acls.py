"""ACLs as a KRaft cluster keeps and applies them: Kafka 4.x's ``StandardAuthorizer``.

The controller stores the bindings (``AclControlManager``: each one once, whatever asks to create
it again); every broker decides with them (``StandardAuthorizerData``):

- a super user (``super.users``, ``User:name`` separated by ``;``) may do everything;
- otherwise the bindings for the resource are the LITERAL ones of its exact name, the PREFIXED ones
  whose name starts it, and the LITERAL ``*`` (every name) ones, for the user's principal or
  ``User:*`` and the client's host or ``*``;
- any matching DENY refuses; otherwise a matching ALLOW permits; with no binding at all for the
  resource ``allow.everyone.if.no.acl.found`` decides (Kafka's default: refuse); bindings for the
  resource that match none of the user's: refuse;
- an ALLOW of READ, WRITE, DELETE or ALTER implies DESCRIBE, one of ALTER_CONFIGS implies
  DESCRIBE_CONFIGS, ALL is every operation; a DENY refuses only its own operation (or ALL).

>>> from course_lib.broker.acls import Acl, Authorizer, ALLOW, DENY, LITERAL, PREFIXED, TOPIC, READ, DESCRIBE, WRITE
>>> auth = Authorizer(super_users="User:admin")
>>> auth.create(Acl(TOPIC, "orders-", PREFIXED, "User:ann", "*", READ, ALLOW))
(None, None)
>>> auth.authorize("User:ann", "127.0.0.1", READ, TOPIC, "orders-eu")
True
>>> auth.authorize("User:ann", "127.0.0.1", DESCRIBE, TOPIC, "orders-eu")  # implied by READ
True
>>> auth.authorize("User:ann", "127.0.0.1", WRITE, TOPIC, "orders-eu")
False
>>> auth.create(Acl(TOPIC, "orders-eu", LITERAL, "User:*", "*", READ, DENY))
(None, None)
>>> auth.authorize("User:ann", "127.0.0.1", READ, TOPIC, "orders-eu")  # DENY wins
False
>>> auth.authorize("User:admin", "127.0.0.1", WRITE, TOPIC, "anything")
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from kafka import errors as Errors

#: the class a cluster configures as ``authorizer.class.name`` to have ACLs (KRaft's only one)
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

# ResourceType codes (org.apache.kafka.common.resource.ResourceType)
UNKNOWN, ANY = 0, 1
TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, DELEGATION_TOKEN, USER = 2, 3, 4, 5, 6, 7
RESOURCE_TYPES = {
    TOPIC: "TOPIC",
    GROUP: "GROUP",
    CLUSTER: "CLUSTER",
    TRANSACTIONAL_ID: "TRANSACTIONAL_ID",
    DELEGATION_TOKEN: "DELEGATION_TOKEN",
    USER: "USER",
}
# PatternType codes (UNKNOWN 0, ANY 1 as above)
MATCH, LITERAL, PREFIXED = 2, 3, 4
PATTERN_TYPES = {MATCH: "MATCH", LITERAL: "LITERAL", PREFIXED: "PREFIXED"}
# AclOperation codes
ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = 2, 3, 4, 5, 6, 7, 8
CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE = 9, 10, 11, 12
CREATE_TOKENS, DESCRIBE_TOKENS, TWO_PHASE_COMMIT = 13, 14, 15
OPERATIONS = {
    ALL: "ALL",
    READ: "READ",
    WRITE: "WRITE",
    CREATE: "CREATE",
    DELETE: "DELETE",
    ALTER: "ALTER",
    DESCRIBE: "DESCRIBE",
    CLUSTER_ACTION: "CLUSTER_ACTION",
    DESCRIBE_CONFIGS: "DESCRIBE_CONFIGS",
    ALTER_CONFIGS: "ALTER_CONFIGS",
    IDEMPOTENT_WRITE: "IDEMPOTENT_WRITE",
    CREATE_TOKENS: "CREATE_TOKENS",
    DESCRIBE_TOKENS: "DESCRIBE_TOKENS",
    TWO_PHASE_COMMIT: "TWO_PHASE_COMMIT",
}
# AclPermissionType codes
DENY, ALLOW = 2, 3
PERMISSIONS = {DENY: "DENY", ALLOW: "ALLOW"}

#: the one name of the CLUSTER resource
CLUSTER_NAME = "kafka-cluster"
#: a LITERAL binding with this name is for every resource of its type; as a host, every host
WILDCARD = "*"
#: a binding for every user
WILDCARD_PRINCIPAL = "User:*"
#: the principal of a connection with no login (a PLAINTEXT listener)
ANONYMOUS = "User:ANONYMOUS"

#: StandardAuthorizerData.IMPLIES_DESCRIBE / IMPLIES_DESCRIBE_CONFIGS: what an ALLOW also grants
IMPLIES_DESCRIBE = frozenset({DESCRIBE, READ, WRITE, DELETE, ALTER})
IMPLIES_DESCRIBE_CONFIGS = frozenset({DESCRIBE_CONFIGS, ALTER_CONFIGS})


@dataclass(frozen=True)
class Acl:
    """One binding (Kafka's ``StandardAcl``): who (principal, host) may or may not (permission)
    do what (operation) to which resources (type, name, pattern type)."""

    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission: int

    def __str__(self) -> str:
        return (
            f"(pattern=ResourcePattern(resourceType={RESOURCE_TYPES.get(self.resource_type, self.resource_type)}, "
            f"name={self.resource_name}, patternType={PATTERN_TYPES.get(self.pattern_type, self.pattern_type)}), "
            f"entry=(principal={self.principal}, host={self.host}, "
            f"operation={OPERATIONS.get(self.operation, self.operation)}, "
            f"permissionType={PERMISSIONS.get(self.permission, self.permission)}))"
        )


@dataclass(frozen=True)
class AclFilter:
    """A filter over bindings (``AclBindingFilter``): ANY (1) or None matches every value; a
    pattern type of MATCH matches the bindings that would apply to a resource of that name."""

    resource_type: int = ANY
    resource_name: str | None = None
    pattern_type: int = ANY
    principal: str | None = None
    host: str | None = None
    operation: int = ANY
    permission: int = ANY

    def unknown(self) -> str | None:
        """What ``AclControlManager.validateFilter`` refuses (INVALID_REQUEST), else None."""
        if self.resource_type == UNKNOWN or self.pattern_type == UNKNOWN:
            return "Unknown patternFilter."
        if self.operation == UNKNOWN or self.permission == UNKNOWN:
            return "Unknown entryFilter."
        return None

    def matches(self, acl: Acl) -> bool:
        """``ResourcePatternFilter.matches`` and ``AccessControlEntryFilter.matches``."""
        if self.resource_type != ANY and self.resource_type != acl.resource_type:
            return False
        if self.pattern_type not in (ANY, MATCH) and self.pattern_type != acl.pattern_type:
            return False
        if self.resource_name is not None:
            if self.pattern_type == ANY or self.pattern_type == acl.pattern_type:
                if self.resource_name != acl.resource_name:
                    return False
            elif acl.pattern_type == LITERAL:
                if acl.resource_name not in (self.resource_name, WILDCARD):
                    return False
            elif not self.resource_name.startswith(acl.resource_name):  # PREFIXED
                return False
        if self.principal is not None and self.principal != acl.principal:
            return False
        if self.host is not None and self.host != acl.host:
            return False
        if self.operation != ANY and self.operation != acl.operation:
            return False
        return self.permission == ANY or self.permission == acl.permission


def parse_super_users(text: str) -> frozenset[str]:
    """``super.users``: principals separated by ``;`` (``User:admin;User:ANONYMOUS``)."""
    return frozenset(p.strip() for p in (text or "").split(";") if p.strip())


class Authorizer:
    """The cluster's bindings and the decisions made with them (see the module's docstring).

    ``super_users``: ``super.users``'s text; ``allow_everyone_if_no_acl_found``: what a resource
    with no binding at all allows.
    """

    def __init__(self, super_users: str = "", allow_everyone_if_no_acl_found: bool = False):
        self.super_users = parse_super_users(super_users)
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found
        self._acls: dict[Acl, None] = {}  # insertion-ordered set

    def __repr__(self) -> str:
        return f"<Authorizer {len(self._acls)} ACLs, super users {sorted(self.super_users)}>"

    @property
    def acls(self) -> list[Acl]:
        return list(self._acls)

    # ---- the controller's side: AclControlManager -------------------------------------------------
    def create(self, acl: Acl) -> tuple[type | None, str | None]:
        """Store ``acl`` (again: no change); (error class, message) as Kafka answers a creation:
        ``AclApis.handleCreateAcls``'s and ``AclControlManager.validateNewAcl``'s checks."""
        if acl.resource_type == CLUSTER and acl.resource_name != CLUSTER_NAME:
            return Errors.InvalidRequestError, f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
        if not acl.resource_name:
            return Errors.InvalidRequestError, "Invalid empty resource name"
        if acl.resource_type not in RESOURCE_TYPES:
            return Errors.InvalidRequestError, f"Invalid resourceType {_name(RESOURCE_TYPES, acl.resource_type)}"
        if acl.pattern_type not in (LITERAL, PREFIXED):
            return Errors.InvalidRequestError, f"Invalid patternType {_name(PATTERN_TYPES, acl.pattern_type)}"
        if acl.operation not in OPERATIONS:
            return Errors.InvalidRequestError, f"Invalid operation {_name(OPERATIONS, acl.operation)}"
        if acl.permission not in PERMISSIONS:
            return Errors.InvalidRequestError, f"Invalid permissionType {_name(PERMISSIONS, acl.permission)}"
        self._acls[acl] = None
        return None, None

    def delete(self, acl_filter: AclFilter) -> tuple[type | None, str | None, list[Acl]]:
        """Remove every binding ``acl_filter`` matches: (error class, message, the removed)."""
        why = acl_filter.unknown()
        if why is not None:
            return Errors.InvalidRequestError, why, []
        removed = [acl for acl in self._acls if acl_filter.matches(acl)]
        for acl in removed:
            del self._acls[acl]
        return None, None, removed

    def describe(self, acl_filter: AclFilter) -> list[Acl]:
        return [acl for acl in self._acls if acl_filter.matches(acl)]

    # ---- every broker's side: StandardAuthorizerData -----------------------------------------------
    def authorize(self, principal: str, host: str, operation: int, resource_type: int, name: str) -> bool:
        """Whether ``principal`` connected from ``host`` may do ``operation`` to the resource."""
        if principal in self.super_users:
            return True
        principals = (principal, WILDCARD_PRINCIPAL)
        allowed = has_resource_acls = False
        for acl in self._acls:
            if acl.resource_type != resource_type or not _applies(acl, name):
                continue
            has_resource_acls = True
            result = _result(acl, principals, host, operation)
            if result is False:
                return False  # a DENY overrides every ALLOW
            allowed = allowed or result is True
        if allowed:
            return True
        return self.allow_everyone_if_no_acl_found and not has_resource_acls

    def authorize_by_resource_type(self, principal: str, host: str, operation: int, resource_type: int) -> bool:
        """Whether ``principal`` may do ``operation`` to *some* resource of the type
        (``Authorizer.authorizeByResourceType``; InitProducerId without a transactional id asks
        it for WRITE on a topic): an ALLOW that no DENY of the same or a shorter prefix covers."""
        if self.authorize(principal, host, operation, resource_type, "hardcode"):
            return True
        principals = (principal, WILDCARD_PRINCIPAL)
        deny: dict[int, set[str]] = {LITERAL: set(), PREFIXED: set()}
        allow: dict[int, set[str]] = {LITERAL: set(), PREFIXED: set()}
        for acl in self._acls:
            if acl.resource_type != resource_type or acl.host not in (host, WILDCARD):
                continue
            if acl.principal not in principals or acl.operation not in (operation, ALL):
                continue
            if acl.permission == DENY:
                if acl.pattern_type == LITERAL and acl.resource_name == WILDCARD:
                    return False
                deny[acl.pattern_type].add(acl.resource_name)
            elif acl.pattern_type == LITERAL and acl.resource_name == WILDCARD:
                return True
            else:
                allow[acl.pattern_type].add(acl.resource_name)
        for pattern_type, names in allow.items():
            for name in names:
                if pattern_type == LITERAL and name in deny[LITERAL]:
                    continue
                if not any(name[:i] in deny[PREFIXED] for i in range(1, len(name) + 1)):
                    return True
        return False

    def authorized_operations(self, principal: str, host: str, resource_type: int, name: str) -> list[int]:
        """The operations ``principal`` may do to the resource, of those its type has."""
        return [
            op for op in SUPPORTED_OPERATIONS[resource_type] if self.authorize(principal, host, op, resource_type, name)
        ]


#: the operations each resource type has (``AclEntry.supportedOperations``): what a client that asks
#: for its authorized operations (Metadata, DescribeTopicPartitions, DescribeCluster) may be told
SUPPORTED_OPERATIONS = {
    TOPIC: (READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, DESCRIBE_CONFIGS, ALTER_CONFIGS),
    GROUP: (READ, DESCRIBE, DELETE, DESCRIBE_CONFIGS, ALTER_CONFIGS),
    CLUSTER: (CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, ALTER, DESCRIBE),
    TRANSACTIONAL_ID: (DESCRIBE, WRITE),
    DELEGATION_TOKEN: (DESCRIBE,),
    USER: (CREATE_TOKENS, DESCRIBE_TOKENS),
}


def _name(names: dict, value: int) -> str:
    return names.get(value, {UNKNOWN: "UNKNOWN", ANY: "ANY"}.get(value, str(value)))


def _applies(acl: Acl, name: str) -> bool:
    """Whether the binding is for the resource called ``name`` (its type already matched)."""
    if acl.pattern_type == PREFIXED:
        return name.startswith(acl.resource_name)
    return acl.resource_name == name or acl.resource_name == WILDCARD


def _result(acl: Acl, principals: Iterable[str], host: str, operation: int) -> bool | None:
    """``StandardAuthorizerData.findResult``: True (allows), False (denies) or None (says nothing)."""
    if acl.principal not in principals or acl.host not in (WILDCARD, host):
        return None
    if acl.operation != ALL:
        if acl.permission == ALLOW:
            if operation == DESCRIBE:
                if acl.operation not in IMPLIES_DESCRIBE:
                    return None
            elif operation == DESCRIBE_CONFIGS:
                if acl.operation not in IMPLIES_DESCRIBE_CONFIGS:
                    return None
            elif operation != acl.operation:
                return None
        elif operation != acl.operation:
            return None
    return acl.permission == ALLOW
