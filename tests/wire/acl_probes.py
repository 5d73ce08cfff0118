"""ACLs through kafka-python's admin and clients, reduced to what a cluster must agree on (error
names and codes, which bindings, which topics a user sees); run against the wire cluster
(tests/wire/test_acls.py) and Kafka (tests/real/test_acls_real.py) with the workshop's
authorizer settings: StandardAuthorizer, the admin a super user, allow.everyone.if.no.acl.found=false.

The user ``ann`` gets: READ on topics PREFIXED ``<p>ord`` (which implies DESCRIBE), WRITE on the
topic ``<p>orders``, a DENY of READ on the topic ``<p>ordersecret`` (which DENY overrides but does
not hide), READ on the group ``<p>g``. The user ``bob`` gets nothing.
"""

from __future__ import annotations

import time

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


def _everywhere(admin, changed_from: list | None = None) -> list:
    """The bindings every broker decides with, once all agree (and differ from ``changed_from``,
    the bindings before a change): a KRaft broker applies the controller's ACL records from the
    metadata log a moment after CreateAcls/DeleteAcls has answered, so a probe waits for that
    state before it asks any broker (the wire cluster's brokers agree at once)."""
    from kafka.protocol.admin import DescribeAclsRequest

    brokers = sorted(b.node_id for b in admin._manager.cluster.brokers())
    request = {"resource_type_filter": 1, "resource_name_filter": None, "pattern_type_filter": 1}
    request.update(principal_filter=None, host_filter=None, operation=1, permission_type=1)
    deadline = time.monotonic() + 30
    while True:
        seen = [
            _rows(admin._convert_describe_acls_response_to_acls(
                admin._manager.run(admin._manager.send, DescribeAclsRequest(**request), b)
            )[0])
            for b in brokers
        ]  # fmt: skip
        if all(rows == seen[0] != changed_from for rows in seen) or time.monotonic() > deadline:
            return seen[0]
        time.sleep(0.1)


def _mine(rows: list, prefix: str) -> list:
    """The probe's own bindings (a shared cluster may hold others')."""
    return [row for row in rows if row[1].startswith(prefix)]


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
        before = _everywhere(admin)
        created = admin.create_acls(grants)
        everywhere = _everywhere(admin, before)
        out: dict = {
            "everywhere": _mine(everywhere, p),
            "created": len(created["succeeded"]),
            "refused": [e.__name__ for e in created["failed"]],
            "all": _mine(_rows(admin.describe_acls(EVERYTHING)[0]), p),
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
        out["everywhere after the delete"] = _mine(_everywhere(admin, everywhere), p)
        out["left"] = _mine(_rows(admin.describe_acls(EVERYTHING)[0]), p)
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
            # asked for, every operation a resource type has (AuthHelper.authorizedOperations)
            "cluster operations": _ops(admin.describe_cluster()["authorized_operations"]),
            "topic operations": [
                (t["error_code"], _ops(t["authorized_operations"]))
                for t in admin.describe_topics(["no-such-acl-topic"])
            ],
        }
    finally:
        admin.close()


ACL_COMMAND = "org.apache.kafka.tools.AclCommand"


def _login_file(path, user: str, password: str) -> str:
    """A Java client's properties that log ``user`` in with SCRAM-SHA-512 (``--command-config``)."""
    path.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{user}" password="{password}";\n'
    )
    return str(path)


def _acl_lines(out: str) -> list:
    """``kafka-acls --list``'s bindings of the Java probe's resources: (resource, entry) pairs, sorted."""
    rows, resource = [], None
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("Current ACLs for resource"):
            resource = line[line.index("`") + 1 : line.rindex("`")]
        elif line.startswith("(principal=") and resource is not None and "name=jv-" in resource:
            rows.append((resource, line))
    return sorted(rows)


def _failure(result) -> str:
    """The Kafka exception a failed ``kafka-acls`` names (its class's simple name)."""
    import re

    found = re.findall(r"org\.apache\.kafka\.common\.errors\.(\w+Exception)", result.stdout + result.stderr)
    return f"exit {result.returncode != 0} {found[0] if found else 'no exception'}"


def java_acl_answers(java: list, bootstrap: str, tmp_path, passwords: dict) -> dict:
    """Java's Admin (Kafka's own ``kafka-acls``, AclCommand) on a cluster with the workshop's
    authorizer: grants, lists (all, and MATCH for one topic), a user with no right to, removes.
    After each change it waits (kafka-python's admin) until every broker has it."""

    watcher = KafkaAdminClient(
        bootstrap_servers=bootstrap,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="SCRAM-SHA-512",
        sasl_plain_username=ADMIN,
        sasl_plain_password=passwords[ADMIN],
    )
    try:
        return _java_acls(java, bootstrap, tmp_path, passwords, watcher)
    finally:
        watcher.close()


def _java_acls(java: list, bootstrap: str, tmp_path, passwords: dict, watcher) -> dict:
    import subprocess

    admin = _login_file(tmp_path / "admin.properties", ADMIN, passwords[ADMIN])
    ann = _login_file(tmp_path / "ann.properties", "ann", passwords["ann"])

    def acls(login: str, *args: str):
        command = [*java, ACL_COMMAND, "--bootstrap-server", bootstrap, "--command-config", login, *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=120)

    grants = [
        ("--allow-principal", "User:ann", "--operation", "Read", "--operation", "Write", "--topic", "jv-"),
        ("--resource-pattern-type", "prefixed"),
        ("--deny-principal", "User:ann", "--operation", "Read", "--topic", "jv-secret"),
        ("--allow-principal", "User:ann", "--operation", "Read", "--group", "jv-g"),
    ]
    state = _everywhere(watcher)
    added = []
    for grant in ((*grants[0], *grants[1]), grants[2], grants[3]):
        added.append(acls(admin, "--add", *grant).returncode)
        state = _everywhere(watcher, state)
    out = {
        "added": added,
        "all": _acl_lines(acls(admin, "--list").stdout),
        "match": _acl_lines(acls(admin, "--list", "--topic", "jv-secret", "--resource-pattern-type", "match").stdout),
        "ann lists": _failure(acls(ann, "--list")),
        "ann adds": _failure(acls(ann, "--add", *grants[3])),
    }
    removed = acls(admin, "--remove", "--force", *grants[0], *grants[1])
    out["removed"] = removed.returncode
    _everywhere(watcher, state)
    out["left"] = _acl_lines(acls(admin, "--list").stdout)
    return out


def java_acls_without_authorizer(java: list, bootstrap: str) -> str:
    import subprocess

    command = [*java, ACL_COMMAND, "--bootstrap-server", bootstrap, "--list"]
    return _failure(subprocess.run(command, capture_output=True, text=True, timeout=120))


#: the users of the decisions probe (their bindings are its own, and it removes them at the end)
DECISION_USERS = ("cy", "dee")


def _ops(bits) -> list:
    """An authorized-operations answer as operation names (an int32 bit field, or kafka-python's
    list of names; None or the schema default: not told)."""
    if bits is None or bits == -2147483648:
        return ["not told"]
    if isinstance(bits, int):
        return sorted(op.name for op in ACLOperation if op > ACLOperation.ALL and bits & (1 << op))
    return sorted(bits)


def acl_decisions(bootstrap: str, login) -> dict:
    """What each user may do to each resource, as the brokers tell it (DescribeTopicPartitions'
    and Metadata's topic authorized operations, DescribeCluster's), after bindings that exercise
    the authorizer's rules: a wildcard resource, the ``User:*`` principal, ALL, PREFIXED and
    LITERAL together, a DENY of one operation beside an ALLOW of ALL, a DENY of ALL, an ALLOW
    for another host, ALTER_CONFIGS implying DESCRIBE_CONFIGS, ALTER implying DESCRIBE."""
    p = "dp-"
    topics = [f"{p}a", f"{p}ab", f"{p}b", f"{p}other"]
    T, C, LIT, PRE = (
        ResourceType.TOPIC,
        ResourceType.CLUSTER,
        ACLResourcePatternType.LITERAL,
        ACLResourcePatternType.PREFIXED,
    )
    DENY = ACLPermissionType.DENY
    grants = [
        _allow("*", ACLOperation.DESCRIBE, T, p, PRE),  # User:*
        _allow("cy", ACLOperation.DESCRIBE_CONFIGS, T, "*", LIT),  # every topic
        _allow("cy", ACLOperation.ALL, T, f"{p}a", PRE),
        _allow("cy", ACLOperation.WRITE, T, f"{p}ab", LIT, DENY),
        _allow("*", ACLOperation.DELETE, T, p, PRE, DENY),
        _allow("cy", ACLOperation.DESCRIBE, C, "kafka-cluster"),
        _allow("cy", ACLOperation.IDEMPOTENT_WRITE, C, "kafka-cluster"),
        _allow("dee", ACLOperation.ALTER_CONFIGS, T, f"{p}b"),
        ACL("User:dee", "10.9.9.9", ACLOperation.READ, ACLPermissionType.ALLOW, ResourcePattern(T, f"{p}b", LIT)),
        _allow("dee", ACLOperation.ALL, T, f"{p}other", LIT, DENY),
        _allow("dee", ACLOperation.ALTER, C, "kafka-cluster"),
    ]
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, **login(ADMIN))
    try:
        admin.create_topics([NewTopic(t, 1, 3) for t in topics])
        before = _everywhere(admin)
        refused = _failed(admin.create_acls(grants))
        mine = _everywhere(admin, before)
        out: dict = {"refused": refused}
        for user in DECISION_USERS:
            client = KafkaAdminClient(bootstrap_servers=bootstrap, **login(user))
            try:
                described = client.describe_topic_partitions(topics)["topics"]
                out[user] = {
                    "topic partitions": sorted(
                        (t["name"], t["error_code"], _ops(t["topic_authorized_operations"])) for t in described
                    ),
                    "metadata": sorted(
                        (t["name"], t["error_code"], _ops(t["authorized_operations"]))
                        for t in client.describe_topics(topics)
                    ),
                    "cluster": _error(lambda client=client: _ops(client.describe_cluster()["authorized_operations"])),
                    "sees": sorted(t for t in client.list_topics() if t.startswith(p)),
                }
            finally:
                client.close()
        removed = admin.delete_acls([_filter(f"User:{u}", ResourceType.ANY, None, ANY) for u in ("*", *DECISION_USERS)])
        out["removed"] = sum(len(acls) for _f, acls, _err in removed)
        _everywhere(admin, mine)
        return out
    finally:
        admin.close()


def acl_transactions(bootstrap: str, login) -> dict:
    """A transactional producer of ``ann``'s: refused without WRITE on its transactional id,
    committing with it (and WRITE on the topic); an idempotent producer of a user who may WRITE
    no topic at all (``InitProducerId``: IDEMPOTENT_WRITE on the cluster or WRITE on some topic)."""
    p = "tx-"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, **login(ADMIN))
    try:
        admin.create_topics([NewTopic(f"{p}t", 1, 3)])
        before = _everywhere(admin)
        grants = [
            _allow("ann", ACLOperation.WRITE, ResourceType.TOPIC, f"{p}t"),
            _allow("ann", ACLOperation.WRITE, ResourceType.TRANSACTIONAL_ID, f"{p}id", ACLResourcePatternType.PREFIXED),
            _allow("bob", ACLOperation.DESCRIBE, ResourceType.TOPIC, f"{p}t"),
        ]
        refused = _failed(admin.create_acls(grants))
        mine = _everywhere(admin, before)
        out = {
            "refused": refused,
            "ann, its id": _transaction(bootstrap, login("ann"), f"{p}t", f"{p}id-1"),
            "ann, another id": _transaction(bootstrap, login("ann"), f"{p}t", f"{p}other"),
            "bob, idempotent": _produce(bootstrap, {**login("bob"), "enable_idempotence": True}, f"{p}t"),
            "bob, not idempotent": _produce(bootstrap, {**login("bob"), "enable_idempotence": False}, f"{p}t"),
        }
        removed = admin.delete_acls(grants)  # an ACL is a filter that matches itself
        out["removed"] = sum(len(acls) for _f, acls, _err in removed)
        _everywhere(admin, mine)
        return out
    finally:
        admin.close()


def _transaction(bootstrap: str, settings: dict, topic: str, transactional_id: str) -> str:
    producer = KafkaProducer(
        bootstrap_servers=bootstrap, transactional_id=transactional_id, max_block_ms=10000, **settings
    )
    try:

        def run():
            producer.init_transactions()
            producer.begin_transaction()
            offset = producer.send(topic, b"t").get(timeout=20).offset
            producer.commit_transaction()
            return offset

        return _error(run)
    finally:
        producer.close(timeout=5)


def acl_admin_calls(bootstrap: str, login) -> dict:
    """``ann``'s admin calls on topics she may only DESCRIBE (and one she may DELETE), a group
    she may not touch, and the cluster: each refused with its resource's error, or done."""
    from kafka.admin import ConfigResource, ConfigResourceType

    p = "ad-"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, **login(ADMIN))
    ann = KafkaAdminClient(bootstrap_servers=bootstrap, **login("ann"))
    try:
        admin.create_topics([NewTopic(f"{p}t", 1, 3), NewTopic(f"{p}del", 1, 3)])
        before = _everywhere(admin)
        grants = [
            _allow("ann", ACLOperation.DESCRIBE, ResourceType.TOPIC, f"{p}t"),
            _allow("ann", ACLOperation.DELETE, ResourceType.TOPIC, f"{p}del"),
        ]
        refused = _failed(admin.create_acls(grants))
        mine = _everywhere(admin, before)
        topic = ConfigResource(ConfigResourceType.TOPIC, f"{p}t")
        altered = ConfigResource(ConfigResourceType.TOPIC, f"{p}t", {"retention.ms": "1000"})

        out = {
            "refused": refused,
            "create partitions": _error(lambda: _codes(ann.create_partitions({f"{p}t": 2}, raise_errors=False))),
            "delete records": _error(lambda: ann.delete_records({TopicPartition(f"{p}t", 0): 0})),
            # (kafka-python 3.0.12 answers a refused DescribeConfigs resource with no configs)
            "describe configs": _error(lambda: ann.describe_configs([topic])),
            "alter configs": _error(lambda: ann.alter_configs([altered], raise_on_unknown=False)),
            "delete a topic it may not": _error(lambda: _codes(ann.delete_topics([f"{p}t"], raise_errors=False))),
            "delete a topic it may": _error(lambda: _codes(ann.delete_topics([f"{p}del"], raise_errors=False))),
            "describe a group": _error(lambda: _codes(ann.describe_groups([f"{p}g"]))),
            "describe a group's configs": _error(lambda: _group_configs_code(ann, f"{p}g")),
            "delete a group": _error(lambda: _codes(ann.delete_groups([f"{p}g"]))),
            "quorum": _error(ann.describe_metadata_quorum),
            "reassignments": _error(ann.list_partition_reassignments),
        }
        removed = admin.delete_acls(grants)
        out["removed"] = sum(len(acls) for _f, acls, _err in removed)
        _everywhere(admin, mine)
        return out
    finally:
        ann.close()
        admin.close()


def _group_configs_code(admin, group: str) -> int:
    """DescribeConfigs of a GROUP resource (kafka-python's describe_configs hides a refused
    resource's error): its error code."""
    from kafka.protocol.admin import DescribeConfigsRequest

    resource = DescribeConfigsRequest.DescribeConfigsResource(
        resource_type=32, resource_name=group, configuration_keys=None
    )
    request = DescribeConfigsRequest(
        version=4, resources=[resource], include_synonyms=False, include_documentation=False
    )
    broker = min(b.node_id for b in admin._manager.cluster.brokers())
    (result,) = admin._manager.run(admin._manager.send, request, broker).results
    return result.error_code


def _codes(answer) -> list:
    """Every ``error_code`` in an admin call's answer (dicts, lists, responses), in order."""
    if hasattr(answer, "to_dict"):
        answer = answer.to_dict()
    if isinstance(answer, dict):
        own = [answer["error_code"]] if isinstance(answer.get("error_code"), int) else []
        return own + [c for k, v in answer.items() if k != "error_code" for c in _codes(v)]
    if isinstance(answer, (list, tuple)):
        return [c for item in answer for c in _codes(item)]
    return []


def acl_allow_everyone(bootstrap: str, login) -> dict:
    """On a cluster with ``allow.everyone.if.no.acl.found=true``: a resource without any binding
    is everyone's; one with a binding (for someone else) is nobody else's."""
    p = "ev-"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, **login(ADMIN))
    ann = KafkaAdminClient(bootstrap_servers=bootstrap, **login("ann"))
    try:
        admin.create_topics([NewTopic(f"{p}free", 1, 3), NewTopic(f"{p}held", 1, 3)])
        before = _everywhere(admin)
        refused = _failed(admin.create_acls([_allow("bob", ACLOperation.READ, ResourceType.TOPIC, f"{p}held")]))
        _everywhere(admin, before)
        return {
            "refused": refused,
            "ann produces to a topic without ACLs": _produce(bootstrap, login("ann"), f"{p}free"),
            "ann produces to a topic with bob's": _produce(bootstrap, login("ann"), f"{p}held"),
            "ann sees": sorted(t for t in ann.list_topics() if t.startswith(p)),
            # the cluster has no binding at all: its operations are everyone's too
            "ann lists ACLs": _error(lambda: _rows(ann.describe_acls(EVERYTHING)[0])),
            "ann creates a topic": _error(lambda: _codes(ann.create_topics([NewTopic(f"{p}new", 1, 1)]))),
        }
    finally:
        ann.close()
        admin.close()
