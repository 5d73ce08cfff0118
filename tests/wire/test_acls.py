"""ACLs on the wire cluster (DescribeAcls, CreateAcls, DeleteAcls, and their enforcement for SASL
users), answered as Kafka answers them: the same probe runs on Kafka in
tests/real/test_acls_real.py, against the same expectation."""

import pytest

from course_lib.wire import WireCluster

from .acl_probes import (
    ADMIN,
    DECISION_USERS,
    USERS,
    acl_admin_calls,
    acl_allow_everyone,
    acl_answers,
    acl_decisions,
    acl_transactions,
    acl_config,
    acls_without_authorizer,
    java_acl_answers,
    java_acls_without_authorizer,
)

P = "acl-"
ANN_TOPIC_ACLS = [
    ("TOPIC", f"{P}ord", "PREFIXED", "User:ann", "*", "READ", "ALLOW"),
    ("TOPIC", f"{P}orders", "LITERAL", "User:ann", "*", "WRITE", "ALLOW"),
    ("TOPIC", f"{P}ordersecret", "LITERAL", "User:ann", "*", "READ", "DENY"),
]
ANN_GROUP_ACL = ("GROUP", f"{P}g", "LITERAL", "User:ann", "*", "READ", "ALLOW")


def expected_acl_answers() -> dict:
    everything = sorted([*ANN_TOPIC_ACLS, ANN_GROUP_ACL])
    return {
        "created": 5,
        "everywhere": everything,
        "refused": ["InvalidRequestError", "InvalidRequestError"],
        "all": everything,
        "match": sorted([ANN_TOPIC_ACLS[0], ANN_TOPIC_ACLS[2]]),
        "groups": [ANN_GROUP_ACL],
        "ann describes ACLs": "ClusterAuthorizationFailedError",
        "ann creates ACLs": ["ClusterAuthorizationFailedError"],
        "ann deletes ACLs": ["ClusterAuthorizationFailedError"],
        # READ and WRITE imply DESCRIBE; a DENY of READ does not deny DESCRIBE
        "ann sees": [f"{P}orders", f"{P}ordersecret"],
        "bob sees": [],
        # named: refused alike whether it exists or not (Metadata does not tell)
        "ann describes other": [(f"{P}other", 29, []), (f"{P}none", 29, [])],
        "ann creates a topic": f"ok [('{P}new', 29, 'Authorization failed.', 0)]",
        "ann elects leaders": (31, [(0, 31)]),
        "ann produces": "ok 0",
        "ann produces to other": "TopicAuthorizationFailedError",
        "bob produces": "TopicAuthorizationFailedError",
        "ann reads": "ok [b'x']",
        "ann reads the denied topic": "TopicAuthorizationFailedError",
        "ann reads in another group": "GroupAuthorizationFailedError",
        "deleted": [(sorted([ANN_TOPIC_ACLS[0], ANN_TOPIC_ACLS[2]]), "NoError"), ([], "NoError")],
        "everywhere after the delete": sorted([ANN_TOPIC_ACLS[1], ANN_GROUP_ACL]),
        "left": sorted([ANN_TOPIC_ACLS[1], ANN_GROUP_ACL]),
        "ann reads after the delete": "TopicAuthorizationFailedError",
    }


_ALL_BUT_DELETE = ["ALTER", "ALTER_CONFIGS", "CREATE", "DESCRIBE", "DESCRIBE_CONFIGS", "READ", "WRITE"]
_CY_TOPICS = [
    ("dp-a", 0, _ALL_BUT_DELETE),  # ALL (PREFIXED dp-a) but the DENY of DELETE for User:* on dp-
    ("dp-ab", 0, [op for op in _ALL_BUT_DELETE if op != "WRITE"]),  # and the DENY of WRITE on it
    ("dp-b", 0, ["DESCRIBE", "DESCRIBE_CONFIGS"]),  # User:* DESCRIBE on dp-, DESCRIBE_CONFIGS on *
    ("dp-other", 0, ["DESCRIBE", "DESCRIBE_CONFIGS"]),
]
_DEE_TOPICS = [
    ("dp-a", 0, ["DESCRIBE"]),
    ("dp-ab", 0, ["DESCRIBE"]),
    ("dp-b", 0, ["ALTER_CONFIGS", "DESCRIBE", "DESCRIBE_CONFIGS"]),  # READ was for another host
    ("dp-other", 29, ["not told"]),  # DENY ALL beats User:*'s DESCRIBE: refused, no operations told
]
#: what each user of the decisions probe is told it may do
DECISIONS = {
    "refused": [],
    "cy": {
        "topic partitions": _CY_TOPICS,
        "metadata": _CY_TOPICS,
        "cluster": "ok ['DESCRIBE', 'IDEMPOTENT_WRITE']",
        "sees": ["dp-a", "dp-ab", "dp-b", "dp-other"],
    },
    "dee": {
        "topic partitions": _DEE_TOPICS,
        "metadata": _DEE_TOPICS,
        "cluster": "ok ['ALTER', 'DESCRIBE']",  # ALTER implies DESCRIBE
        "sees": ["dp-a", "dp-ab", "dp-b"],
    },
    "removed": 11,
}


#: transactional and idempotent producers (kafka-python 3.0.12 reports InitProducerId's
#: CLUSTER_AUTHORIZATION_FAILED as a bare KafkaError)
TRANSACTIONS = {
    "refused": [],
    "ann, its id": "ok 0",
    "ann, another id": "TransactionalIdAuthorizationFailedError",
    "bob, idempotent": "KafkaError",
    "bob, not idempotent": "TopicAuthorizationFailedError",
    "removed": 3,
}


#: ann's admin calls, who may DESCRIBE ad-t and DELETE ad-del only
ADMIN_CALLS = {
    "refused": [],
    "create partitions": "ok [29]",  # ALTER on the topic
    "delete records": "TopicAuthorizationFailedError",  # DELETE on the topic
    "describe configs": "ok {'topic': {'ad-t': {}}}",  # DESCRIBE_CONFIGS (refused: no configs)
    "alter configs": "ok {'topic': {'ad-t': '[Error 29] TopicAuthorizationFailedError: Topic authorization failed.'}}",
    "delete a topic it may not": "ok [29]",
    "delete a topic it may": "ok [0]",
    "describe a group": "GroupAuthorizationFailedError",  # DESCRIBE on the group (FindCoordinator first)
    "delete a group": "GroupAuthorizationFailedError",
    "describe a group's configs": "ok 30",  # DESCRIBE_CONFIGS on the group: GROUP_AUTHORIZATION_FAILED
    "quorum": "ClusterAuthorizationFailedError",  # DESCRIBE on the cluster
    "reassignments": "ClusterAuthorizationFailedError",
    "removed": 2,
}


#: with allow.everyone.if.no.acl.found=true
EVERYONE = {
    "refused": [],
    "ann produces to a topic without ACLs": "ok 0",
    "ann produces to a topic with bob's": "TopicAuthorizationFailedError",
    "ann sees": ["ev-free"],
    "ann lists ACLs": "ok [('TOPIC', 'ev-held', 'LITERAL', 'User:bob', '*', 'READ', 'ALLOW')]",
    "ann creates a topic": "ok [0]",
}


#: what every ACL API answers on a cluster without an authorizer
WITHOUT_AUTHORIZER = {
    "versions": [(1, 3)] * 3,  # v0 is gone since Kafka 4.0 (KIP-896)
    "describe": "SecurityDisabledError",
    "create": ["SecurityDisabledError"],
    "delete": ["SecurityDisabledError"],
    "cluster operations": ["ALTER", "ALTER_CONFIGS", "CLUSTER_ACTION", "CREATE", "DESCRIBE", "DESCRIBE_CONFIGS"]
    + ["IDEMPOTENT_WRITE"],
    "topic operations": [
        (3, ["ALTER", "ALTER_CONFIGS", "CREATE", "DELETE", "DESCRIBE", "DESCRIBE_CONFIGS", "READ", "WRITE"])
    ],
}


def test_acls_are_kept_and_enforced_as_kafka_does(no_leaks):
    users = {ADMIN: "admin-pw", **{u: f"{u}-pw" for u in USERS}}
    with WireCluster(brokers=3, users=users, config=acl_config(), group_initial_rebalance_delay_ms=0) as wire:
        got = acl_answers(wire.bootstrap_servers, wire.sasl.client_config)
    assert got == expected_acl_answers()


def test_each_user_is_told_what_the_bindings_allow(no_leaks):
    users = {ADMIN: "admin-pw", **{u: f"{u}-pw" for u in DECISION_USERS}}
    with WireCluster(brokers=3, users=users, config=acl_config()) as wire:
        assert acl_decisions(wire.bootstrap_servers, wire.sasl.client_config) == DECISIONS


def test_transactional_ids_and_idempotence_need_their_acls(no_leaks):
    users = {ADMIN: "admin-pw", **{u: f"{u}-pw" for u in USERS}}
    with WireCluster(brokers=3, users=users, config=acl_config()) as wire:
        assert acl_transactions(wire.bootstrap_servers, wire.sasl.client_config) == TRANSACTIONS


def test_admin_calls_need_their_acls(no_leaks):
    users = {ADMIN: "admin-pw", **{u: f"{u}-pw" for u in USERS}}
    with WireCluster(brokers=3, users=users, config=acl_config()) as wire:
        assert acl_admin_calls(wire.bootstrap_servers, wire.sasl.client_config) == ADMIN_CALLS


def test_a_resource_without_acls_is_everyones_if_so_configured(no_leaks):
    users = {ADMIN: "admin-pw", **{u: f"{u}-pw" for u in USERS}}
    config = {**acl_config(), "allow.everyone.if.no.acl.found": "true"}
    with WireCluster(brokers=3, users=users, config=config) as wire:
        assert acl_allow_everyone(wire.bootstrap_servers, wire.sasl.client_config) == EVERYONE


#: the share group APIs under ACLs (tests/wire/share_acl_probes.py): ann may READ sh-g and sh-t
_OFFSETS_REFUSED = ("sh-other", True, 29, "Topic authorization failed.", -1, -1)
SHARES = {
    "refused": [],
    "state on both topics": (0, None, [("sh-other", 0), ("sh-t", 0)]),
    # ShareGroupHeartbeat: READ on the group, then DESCRIBE on every topic subscribed to
    "ann joins on her topic": 0,
    "ann joins on the other": 29,
    "ann joins another group": 30,
    # ShareFetch, ShareAcknowledge: READ on the group (the whole request: no message, no lock
    # duration), then READ on each topic, its fetch and its acknowledgements alike
    "bob fetches": (30, None, 0),
    "ann fetches in another group": (30, None, 0),
    "ann's member id too long": (42, None, 0),
    "ann fetches both": {"sh-other": (29, 0)},
    "ann acknowledges in a fetch": {"sh-other": (29, 29)},
    "ann acknowledges": {"sh-other": (29,)},
    "bob acknowledges": (30, None, 0),
    # DescribeShareGroupOffsets: DESCRIBE on the group, then on each topic (all: left out;
    # named: refused, without a topic id)
    "ann describes all offsets": (0, None, [("sh-t", 0)]),
    "ann describes both topics' offsets": (0, None, [_OFFSETS_REFUSED, ("sh-t", 0)]),
    "bob describes offsets": (30, None, []),
    # AlterShareGroupOffsets: READ on the group, then on each topic; DeleteShareGroupOffsets:
    # DELETE on the group (ann may only READ it). A group refused, or with members: that alone
    "bob alters offsets": ((30, "Group authorization failed."), []),
    "ann alters offsets of a group with members": ((68, "The group is not empty."), []),
    "ann deletes offsets": ((30, "Group authorization failed."), []),
    "ann alters offsets once all left": (
        (0, None),
        [("sh-other", 0, 29, "Topic authorization failed."), ("sh-t", 0, 0, None)],
    ),
    # Java's Admin.listShareGroupOffsets (bob: FindCoordinator refuses him first)
    "java": {"ann": ["sh-t"], "bob": "GroupAuthorizationException"},
    "removed": 2,
}


def test_share_groups_need_their_acls(no_leaks):
    from course_lib.java_client import DriverProcess

    from .share_acl_probes import acl_shares, java_admins
    from .test_java_clients import _java_or_skip

    _java_or_skip()
    users = {ADMIN: "admin-pw", **{u: f"{u}-pw" for u in USERS}}
    with WireCluster(brokers=3, users=users, config=acl_config()) as wire, DriverProcess() as driver:
        java = java_admins(driver, wire.bootstrap_servers, users)
        assert acl_shares(wire.bootstrap_servers, wire.sasl.client_config, java) == SHARES


#: FindCoordinator, a key found or refused (tests/wire/find_coordinator_probes.py): from v4 no
#: message on any row (the schema's default ""), before it Errors.message()
FIND_COORDINATOR = {
    "refused": [],
    "v4 groups": [("fc-g", 0, "", True), ("fc-other", 30, "", False)],
    "v4 transactional ids": [("fc-tx", 53, "", False)],
    "v4 by the super user": [("fc-tx", 0, "", True)],
    "v3 found": [(None, 0, "NONE", True)],
    "v3 refused": [(None, 30, "Group authorization failed.", False)],
    "v3 transactional id refused": [(None, 53, "Transactional Id authorization failed.", False)],
    "removed": 1,
}


def test_find_coordinator_answers_field_by_field(no_leaks):
    from .find_coordinator_probes import find_coordinator_answers

    users = {ADMIN: "admin-pw", **{u: f"{u}-pw" for u in USERS}}
    with WireCluster(brokers=3, users=users, config=acl_config()) as wire:
        assert find_coordinator_answers(wire.bootstrap_servers, wire.sasl.client_config) == FIND_COORDINATOR


#: DescribeTransactions and ListTransactions under ACLs (tests/wire/transaction_state_probes.py):
#: DESCRIBE on the transactional id (else refused, or not listed), and on each topic shown
TRANSACTION_ACLS = {
    "refused": [],
    "ann describes hers": (("Ongoing", 0, 60000, True, [0]), ("Ongoing", 0, 60000, True, [])),
    "ann describes another": ("TransactionalIdAuthorizationFailedError",),
    "ann lists": ([0], [], [("1", "Ongoing")]),
    "the super user lists": ([0], [], [("1", "Ongoing"), ("2", "Ongoing")]),
    "removed": 2,
}


def test_transactions_are_described_to_whom_may(no_leaks):
    from .transaction_state_probes import transaction_acls

    users = {ADMIN: "admin-pw", **{u: f"{u}-pw" for u in USERS}}
    with WireCluster(brokers=3, users=users, config=acl_config()) as wire:
        assert transaction_acls(wire.bootstrap_servers, wire.sasl.client_config) == TRANSACTION_ACLS


def test_acl_apis_without_an_authorizer_answer_security_disabled(wire):
    assert acls_without_authorizer(wire.bootstrap_servers) == WITHOUT_AUTHORIZER


def _pattern(rtype: str, name: str, pattern: str) -> str:
    return f"ResourcePattern(resourceType={rtype}, name={name}, patternType={pattern})"


def _entry(operation: str, permission: str) -> str:
    return f"(principal=User:ann, host=*, operation={operation}, permissionType={permission})"


PREFIXED_JV = _pattern("TOPIC", "jv-", "PREFIXED")
SECRET = (_pattern("TOPIC", "jv-secret", "LITERAL"), _entry("READ", "DENY"))
GROUP = (_pattern("GROUP", "jv-g", "LITERAL"), _entry("READ", "ALLOW"))
#: what Java's kafka-acls (Admin.createAcls/describeAcls/deleteAcls) sees
JAVA_ACL_ANSWERS = {
    "added": [0, 0, 0],
    "all": sorted([(PREFIXED_JV, _entry("READ", "ALLOW")), (PREFIXED_JV, _entry("WRITE", "ALLOW")), SECRET, GROUP]),
    "match": sorted([(PREFIXED_JV, _entry("READ", "ALLOW")), (PREFIXED_JV, _entry("WRITE", "ALLOW")), SECRET]),
    "ann lists": "exit True ClusterAuthorizationException",
    "ann adds": "exit True ClusterAuthorizationException",
    "removed": 0,
    "left": sorted([SECRET, GROUP]),
}
JAVA_WITHOUT_AUTHORIZER = "exit True SecurityDisabledException"


def test_java_admin_acls_on_the_wire(no_leaks, tmp_path):
    from .test_java_clients import _java_or_skip

    java = _java_or_skip()
    users = {ADMIN: "admin-pw", **{u: f"{u}-pw" for u in USERS}}
    with WireCluster(brokers=3, users=users, config=acl_config()) as wire:
        assert java_acl_answers(java, wire.bootstrap_servers, tmp_path, users) == JAVA_ACL_ANSWERS
    with WireCluster(brokers=1) as plain:
        assert java_acls_without_authorizer(java, plain.bootstrap_servers) == JAVA_WITHOUT_AUTHORIZER


def test_cli_takes_the_authorizer_by_kafkas_name(capsys):
    from course_lib.wire.__main__ import main

    with pytest.raises(SystemExit):
        main(["--config", "authorizer.class.name=kafka.security.authorizer.AclAuthorizer"], stdin=iter([]))
    assert "StandardAuthorizer" in capsys.readouterr().err
    with WireCluster(brokers=1, config=acl_config()) as wire:
        assert wire.authorizer is not None and wire.authorizer.super_users == {f"User:{ADMIN}", "User:ANONYMOUS"}
    with WireCluster(brokers=1) as wire:
        assert wire.authorizer is None
