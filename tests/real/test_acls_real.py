"""Kafka's answers to the ACL probe of tests/wire/test_acls.py, with the same expectation: a
cluster with the workshop's authorizer settings (course_lib.real.security.ClusterAuth: SCRAM
users, StandardAuthorizer, allow.everyone.if.no.acl.found=false), and the session cluster, which
has no authorizer."""

import subprocess
from contextlib import contextmanager

import pytest

from course_lib.real.security import ClusterAuth, client_kwargs
from tests.wire.acl_probes import (
    ADMIN,
    DECISION_USERS,
    USERS,
    acl_admin_calls,
    acl_allow_everyone,
    acl_answers,
    acl_decisions,
    acl_transactions,
    acls_without_authorizer,
    java_acl_answers,
    java_acls_without_authorizer,
)
from tests.wire.test_acls import (
    ADMIN_CALLS,
    EVERYONE,
    DECISIONS,
    FIND_COORDINATOR,
    JAVA_ACL_ANSWERS,
    TRANSACTIONS,
    JAVA_WITHOUT_AUTHORIZER,
    SHARES,
    TRANSACTION_ACLS,
    WITHOUT_AUTHORIZER,
    expected_acl_answers,
)
from tests.wire.test_java_clients import _java_or_skip

pytestmark = pytest.mark.real_kafka

PASSWORDS = {ADMIN: "admin-pw", **{u: f"{u}-pw" for u in (*USERS, *DECISION_USERS)}}


@contextmanager
def _secured_cluster(**broker_config):
    """A 3-broker Kafka whose client listener takes SCRAM-SHA-512 logins, with the probes' users."""
    from kafka import KafkaAdminClient
    from kafka.admin import ScramMechanism, UserScramCredentialUpsertion

    from course_lib.real.cluster import LocalCluster

    c = LocalCluster(
        progress=False,
        proxies=False,
        controllers=1,
        auth=ClusterAuth(admin_user=ADMIN, admin_password=PASSWORDS[ADMIN]),
        broker_config={"group.initial.rebalance.delay.ms": "0", **broker_config},
    )
    c.start()
    try:
        admin = KafkaAdminClient(bootstrap_servers=c.bootstrap_servers, **c.client_auth())
        try:
            users = [u for u in PASSWORDS if u != ADMIN]
            mechanism = ScramMechanism.SCRAM_SHA_512
            errors = admin.alter_user_scram_credentials(
                [UserScramCredentialUpsertion(u, mechanism, PASSWORDS[u]) for u in users]
            )
            assert not any(errors.values()), errors
        finally:
            admin.close()
        yield c
    finally:
        c.stop()
        left = subprocess.run(["pgrep", "-f", c.tag], capture_output=True, text=True).stdout
        assert not left.strip(), f"JVMs of the secured cluster survived stop(): {left}"


@pytest.fixture(scope="module")
def secured():
    """The workshop's settings: allow.everyone.if.no.acl.found=false."""
    with _secured_cluster() as c:
        yield c


def test_acls_are_kept_and_enforced_on_kafka(secured):
    got = acl_answers(secured.bootstrap_servers, lambda user: client_kwargs(user, PASSWORDS[user]))
    assert got == expected_acl_answers()


def test_each_user_is_told_what_the_bindings_allow_on_kafka(secured):
    login = lambda user: client_kwargs(user, PASSWORDS[user])  # noqa: E731
    assert acl_decisions(secured.bootstrap_servers, login) == DECISIONS


def test_transactional_ids_and_idempotence_need_their_acls_on_kafka(secured):
    login = lambda user: client_kwargs(user, PASSWORDS[user])  # noqa: E731
    assert acl_transactions(secured.bootstrap_servers, login) == TRANSACTIONS


def test_admin_calls_need_their_acls_on_kafka(secured):
    login = lambda user: client_kwargs(user, PASSWORDS[user])  # noqa: E731
    assert acl_admin_calls(secured.bootstrap_servers, login) == ADMIN_CALLS


def test_share_groups_need_their_acls_on_kafka(secured):
    from course_lib.java_client import DriverProcess
    from tests.wire.share_acl_probes import acl_shares, java_admins

    _java_or_skip()
    login = lambda user: client_kwargs(user, PASSWORDS[user])  # noqa: E731
    with DriverProcess() as driver:
        java = java_admins(driver, secured.bootstrap_servers, PASSWORDS)
        assert acl_shares(secured.bootstrap_servers, login, java) == SHARES


def test_find_coordinator_answers_field_by_field_on_kafka(secured):
    from tests.wire.find_coordinator_probes import find_coordinator_answers

    login = lambda user: client_kwargs(user, PASSWORDS[user])  # noqa: E731
    assert find_coordinator_answers(secured.bootstrap_servers, login) == FIND_COORDINATOR


def test_transactions_are_described_to_whom_may_on_kafka(secured):
    from tests.wire.transaction_state_probes import transaction_acls

    login = lambda user: client_kwargs(user, PASSWORDS[user])  # noqa: E731
    assert transaction_acls(secured.bootstrap_servers, login) == TRANSACTION_ACLS


def test_acl_apis_without_an_authorizer_on_kafka(cluster):
    assert acls_without_authorizer(cluster.bootstrap_servers) == WITHOUT_AUTHORIZER


def test_java_admin_acls_on_kafka(secured, cluster, tmp_path):
    java = _java_or_skip()
    assert java_acl_answers(java, secured.bootstrap_servers, tmp_path, PASSWORDS) == JAVA_ACL_ANSWERS
    assert java_acls_without_authorizer(java, cluster.bootstrap_servers) == JAVA_WITHOUT_AUTHORIZER


def test_a_resource_without_acls_is_everyones_if_so_configured_on_kafka():
    with _secured_cluster(**{"allow.everyone.if.no.acl.found": "true"}) as c:
        login = lambda user: client_kwargs(user, PASSWORDS[user])  # noqa: E731
        assert acl_allow_everyone(c.bootstrap_servers, login) == EVERYONE
