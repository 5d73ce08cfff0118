"""ACLs through kafka-python's admin and clients, reduced to what a cluster must agree on (error
names and codes, which bindings, which topics a user sees); run against the wire cluster
(tests/wire/test_acls.py) and Kafka (tests/real/test_acls_real.py) with the workshop's
authorizer settings: StandardAuthorizer, the admin a super user, allow.everyone.if.no.acl.found=false.

The user ``ann`` gets: READ on topics PREFIXED ``<p>ord`` (which implies DESCRIBE), WRITE on the
topic ``<p>orders``, a DENY of READ on the topic ``<p>ordersecret`` (which DENY overrides but does
not hide), READ on the group ``<p>g``. The user ``bob`` gets nothing.
"""

from __future__ import annotations

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    NewTopic,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)

#: the workshop's broker settings (course_lib.real.security.ClusterAuth.broker_properties)
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
ANY, MATCH = ACLResourcePatternType.ANY, ACLResourcePatternType.MATCH
ADMIN = "instructor"
USERS = ("ann", "bob")


def _filter(principal, rtype, name, pattern, operation=ACLOperation.ANY) -> ACLFilter:
    """Bindings of ``principal`` (None: anyone's), any host and permission."""
    return ACLFilter(principal, None, operation, ACLPermissionType.ANY, ResourcePatternFilter(rtype, name, pattern))


EVERYTHING = _filter(None, ResourceType.ANY, None, ACLResourcePatternType.ANY)


def acl_config() -> dict:
    """The authorizer settings by Kafka's names (for the wire cluster's ``config``)."""
    return {
        "authorizer.class.name": AUTHORIZER,
        "super.users": f"User:{ADMIN};User:ANONYMOUS",
        "allow.everyone.if.no.acl.found": "false",
    }


def _allow(user: str, op, rtype, name: str, pattern=ACLResourcePatternType.LITERAL, permission=ACLPermissionType.ALLOW):
    return ACL(f"User:{user}", "*", op, permission, ResourcePattern(rtype, name, pattern))


def _rows(acls) -> list:
    return sorted(
        (
            a.resource_pattern.resource_type.name,
            a.resource_pattern.resource_name,
            a.resource_pattern.pattern_type.name,
            a.principal,
            a.host,
            a.operation.name,
            a.permission_type.name,
        )
        for a in acls
    )


def _error(call) -> str:
    """The name of the exception ``call()`` raises, or "ok" with its result."""
    try:
        result = call()
    except Exception as exc:  # noqa: BLE001 - the name is what the two clusters must agree on
        return type(exc).__name__
    return f"ok {result}" if result is not None else "ok"


def acl_answers(bootstrap: str, login) -> dict:
    """``login(user)``: kafka-python keyword arguments that log ``user`` in."""
    p = "acl-"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, **login(ADMIN))
    ann_admin = KafkaAdminClient(bootstrap_servers=bootstrap, **login("ann"))
    bob_admin = KafkaAdminClient(bootstrap_servers=bootstrap, **login("bob"))
    try:
        admin.create_topics([NewTopic(f"{p}{n}", 1, 3) for n in ("orders", "ordersecret", "other")])
        grants = [
            _allow("ann", ACLOperation.READ, ResourceType.TOPIC, f"{p}ord", ACLResourcePatternType.PREFIXED),
            _allow("ann", ACLOperation.WRITE, ResourceType.TOPIC, f"{p}orders"),
            _allow("ann", ACLOperation.WRITE, ResourceType.TOPIC, f"{p}orders"),  # twice: stored once
            _allow("ann", ACLOperation.READ, ResourceType.TOPIC, f"{p}ordersecret", permission=ACLPermissionType.DENY),
            _allow("ann", ACLOperation.READ, ResourceType.GROUP, f"{p}g"),
            _allow("ann", ACLOperation.ALTER, ResourceType.CLUSTER, "not-the-cluster"),  # INVALID_REQUEST
            _allow("ann", ACLOperation.READ, ResourceType.TOPIC, ""),  # INVALID_REQUEST: empty name
        ]
        created = admin.create_acls(grants)
        out: dict = {
            "created": len(created["succeeded"]),
            "refused": [e.__name__ for e in created["failed"]],
            "all": _rows(admin.describe_acls(EVERYTHING)[0]),
            # MATCH: the bindings that apply to one resource - literal, prefixed and wildcard
            "match": _rows(admin.describe_acls(_filter(None, ResourceType.TOPIC, f"{p}ordersecret", MATCH))[0]),
            "groups": _rows(admin.describe_acls(_filter("User:ann", ResourceType.GROUP, None, ANY))[0]),
            # a user who is no super user and has no ALTER/DESCRIBE on the cluster
            "ann describes ACLs": _error(lambda: ann_admin.describe_acls(EVERYTHING)),
            "ann creates ACLs": _failed(
                ann_admin.create_acls([_allow("ann", ACLOperation.ALL, ResourceType.TOPIC, "*")])
            ),
            "ann deletes ACLs": [err.__name__ for _f, _acls, err in ann_admin.delete_acls([EVERYTHING])],
            # Metadata: every topic - those it may DESCRIBE; a named one it may not: refused
            "ann sees": sorted(ann_admin.list_topics()),
            "bob sees": sorted(bob_admin.list_topics()),
            "ann describes other": _topics(ann_admin.describe_topics([f"{p}other", f"{p}none"])),
            "ann creates a topic": _error(lambda: _create(ann_admin, f"{p}new")),
            "ann elects leaders": _election(ann_admin, f"{p}orders"),
            "ann produces": _produce(bootstrap, login("ann"), f"{p}orders"),
            "ann produces to other": _produce(bootstrap, login("ann"), f"{p}other"),
            "bob produces": _produce(bootstrap, login("bob"), f"{p}orders"),
            "ann reads": _consume(bootstrap, login("ann"), f"{p}orders", f"{p}g"),
            "ann reads the denied topic": _consume(bootstrap, login("ann"), f"{p}ordersecret", None),
            "ann reads in another group": _consume(bootstrap, login("ann"), f"{p}orders", f"{p}h"),
        }
        deleted = admin.delete_acls(
            [
                _filter("User:ann", ResourceType.TOPIC, None, ANY, ACLOperation.READ),
                _filter("User:nobody", ResourceType.ANY, None, ANY),
            ]
        )
        out["deleted"] = [(_rows(acls), err.__name__) for _f, acls, err in deleted]
        out["left"] = _rows(admin.describe_acls(EVERYTHING)[0])
        out["ann reads after the delete"] = _consume(bootstrap, login("ann"), f"{p}orders", None)
        return out
    finally:
        for client in (admin, ann_admin, bob_admin):
            client.close()


def _create(admin, name: str):
    result = admin.create_topics([NewTopic(name, 1, 1)], raise_errors=False)
    return [(t["name"], t["error_code"], t["error_message"], t["topic_config_error_code"]) for t in result["topics"]]


def _election(admin, topic: str):
    result = admin.elect_leaders(0, {topic: [0]}, raise_errors=False)
    partitions = [p for r in result.replica_election_results for p in r.partition_result]
    return result.error_code, [(p.partition_id, p.error_code) for p in partitions]


def _failed(created: dict) -> list:
    return [e.__name__ for e in created["failed"]]


def _topics(described: list) -> list:
    return [(t["name"], t["error_code"], t["partitions"]) for t in described]


def _produce(bootstrap: str, settings: dict, topic: str) -> str:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", max_block_ms=5000, **settings)
    try:
        return _error(lambda: producer.send(topic, b"x").get(timeout=20).offset)
    finally:
        producer.close(timeout=5)


def _consume(bootstrap: str, settings: dict, topic: str, group: str | None) -> str:
    """The values read from ``topic`` (a group's subscription, or assigned without a group), or
    the error that stops the reading."""
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        consumer_timeout_ms=15000,
        **settings,
    )
    try:
        if group is None:
            consumer.assign([TopicPartition(topic, 0)])
        else:
            consumer.subscribe([topic])

        def read():
            for _ in range(30):
                batch = consumer.poll(timeout_ms=1000)
                values = [r.value for records in batch.values() for r in records]
                if values:
                    if group is not None:
                        consumer.commit()
                    return values
            return []

        return _error(read)
    finally:
        consumer.close()


def acls_without_authorizer(bootstrap: str) -> dict:
    """A cluster with no authorizer: every ACL API answers SECURITY_DISABLED."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        grant = _allow("ann", ACLOperation.READ, ResourceType.TOPIC, "t")
        versions = admin._manager.broker_version_data.api_versions
        return {
            # DescribeAcls, CreateAcls, DeleteAcls: advertised with or without an authorizer
            "versions": [tuple(versions[key]) for key in (29, 30, 31)],
            "describe": _error(lambda: admin.describe_acls(EVERYTHING)),
            "create": [e.__name__ for e in admin.create_acls([grant])["failed"]],
            "delete": [err.__name__ for _f, _acls, err in admin.delete_acls([EVERYTHING])],
        }
    finally:
        admin.close()
