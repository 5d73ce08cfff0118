"""The StandardAuthorizer model (course_lib.broker.acls) on its own: the rules the twin probes
(tests/wire/test_acls.py, tests/real/test_acls_real.py) check through the clients, case by case."""

import pytest

from course_lib.broker.acls import (
    ALL,
    ALLOW,
    ALTER,
    ALTER_CONFIGS,
    ANY,
    CLUSTER,
    DELETE,
    DENY,
    DESCRIBE,
    DESCRIBE_CONFIGS,
    GROUP,
    LITERAL,
    MATCH,
    PREFIXED,
    READ,
    TOPIC,
    WRITE,
    Acl,
    AclFilter,
    Authorizer,
)
from course_lib.broker.options import ClusterOptions

HOST = "127.0.0.1"


def _acl(name, op, permission=ALLOW, pattern=LITERAL, principal="User:ann", host="*", rtype=TOPIC):
    return Acl(rtype, name, pattern, principal, host, op, permission)


def test_no_binding_refuses_unless_everyone_is_allowed_and_a_binding_for_others_refuses_anyway():
    strict, lax = Authorizer(), Authorizer(allow_everyone_if_no_acl_found=True)
    assert not strict.authorize("User:ann", HOST, READ, TOPIC, "t")
    assert lax.authorize("User:ann", HOST, READ, TOPIC, "t")
    lax.create(_acl("t", READ, principal="User:bob"))
    assert not lax.authorize("User:ann", HOST, READ, TOPIC, "t")
    assert lax.authorize("User:ann", HOST, READ, TOPIC, "u")


@pytest.mark.parametrize(
    "granted, asked, allowed",
    [
        (READ, DESCRIBE, True),
        (WRITE, DESCRIBE, True),
        (DELETE, DESCRIBE, True),
        (ALTER, DESCRIBE, True),
        (DESCRIBE, READ, False),
        (ALTER_CONFIGS, DESCRIBE_CONFIGS, True),
        (DESCRIBE_CONFIGS, ALTER_CONFIGS, False),
        (ALL, DELETE, True),
        (READ, WRITE, False),
    ],
)
def test_an_allow_implies_what_kafka_says(granted, asked, allowed):
    auth = Authorizer()
    auth.create(_acl("t", granted))
    assert auth.authorize("User:ann", HOST, asked, TOPIC, "t") is allowed


def test_a_deny_overrides_allows_but_only_for_its_operation():
    auth = Authorizer()
    auth.create(_acl("*", ALL))
    auth.create(_acl("t", READ, DENY))
    assert not auth.authorize("User:ann", HOST, READ, TOPIC, "t")
    assert auth.authorize("User:ann", HOST, DESCRIBE, TOPIC, "t")  # a DENY of READ implies nothing
    auth.create(_acl("t", ALL, DENY, principal="User:*"))
    assert not auth.authorize("User:ann", HOST, DESCRIBE, TOPIC, "t")


def test_patterns_principals_and_hosts_match_as_kafka_does():
    auth = Authorizer()
    auth.create(_acl("or", READ, pattern=PREFIXED))
    auth.create(_acl("x", READ, principal="User:*"))
    auth.create(_acl("y", READ, host="10.0.0.1"))
    assert auth.authorize("User:ann", HOST, READ, TOPIC, "orders")
    assert not auth.authorize("User:ann", HOST, READ, TOPIC, "o")
    assert not auth.authorize("User:ann", HOST, READ, GROUP, "orders")  # another resource type
    assert auth.authorize("User:bob", HOST, READ, TOPIC, "x")
    assert not auth.authorize("User:ann", HOST, READ, TOPIC, "y")
    assert auth.authorize("User:ann", "10.0.0.1", READ, TOPIC, "y")
    assert Authorizer(super_users="User:root;User:ANONYMOUS").authorize("User:root", HOST, ALTER, CLUSTER, "x")


def test_creation_refuses_what_kafka_refuses_and_keeps_a_binding_once():
    auth = Authorizer()
    assert auth.create(_acl("not-kafka-cluster", ALTER, rtype=CLUSTER))[0].errno == 42
    assert auth.create(_acl("", READ))[1] == "Invalid empty resource name"
    assert auth.create(_acl("t", READ, pattern=MATCH))[1] == "Invalid patternType MATCH"
    assert auth.create(_acl("t", ANY))[1] == "Invalid operation ANY"
    assert auth.create(_acl("t", READ)) == auth.create(_acl("t", READ)) == (None, None)
    assert auth.acls == [_acl("t", READ)]


def test_filters_match_and_delete_as_kafka_does():
    auth = Authorizer()
    for acl in (_acl("ord", READ, pattern=PREFIXED), _acl("orders", WRITE), _acl("*", DESCRIBE), _acl("other", READ)):
        auth.create(acl)
    match = auth.describe(AclFilter(TOPIC, "orders", MATCH))
    assert {a.resource_name for a in match} == {"ord", "orders", "*"}
    assert [a.resource_name for a in auth.describe(AclFilter(TOPIC, "orders", ANY))] == ["orders"]
    assert auth.delete(AclFilter(operation=READ))[2] == [_acl("ord", READ, pattern=PREFIXED), _acl("other", READ)]
    error, message, removed = auth.delete(AclFilter(operation=0))  # UNKNOWN: INVALID_REQUEST
    assert (error.errno, message, removed) == (42, "Unknown entryFilter.", [])


def test_by_resource_type_needs_an_allow_no_deny_covers():
    auth = Authorizer()
    assert not auth.authorize_by_resource_type("User:ann", HOST, WRITE, TOPIC)
    auth.create(_acl("orders", WRITE))
    assert auth.authorize_by_resource_type("User:ann", HOST, WRITE, TOPIC)
    auth.create(_acl("ord", WRITE, DENY, pattern=PREFIXED))
    assert not auth.authorize_by_resource_type("User:ann", HOST, WRITE, TOPIC)


def test_the_cluster_takes_only_the_standard_authorizer():
    assert ClusterOptions.from_kwargs(authorizer_class_name="").authorizer_class_name == ""
    with pytest.raises(ValueError, match="StandardAuthorizer"):
        ClusterOptions.from_kwargs(authorizer_class_name="kafka.security.authorizer.AclAuthorizer")
