"""Apply a roster to a cluster: SCRAM users, prefixed ACLs and client quotas, through the Kafka
admin API; and take learners off it again.

Every operation is an upsert on the broker side (setting a SCRAM credential or a quota again
replaces it; creating an ACL that exists is a no-op), so running provisioning twice changes
nothing. Removal is the reverse: ACLs and user first (the learner can no longer recreate
anything), then quotas, topics and consumer groups under the learner's prefix.
"""

from __future__ import annotations

from course_lib.workshop.quotas import alter_user_quotas, describe_user_quotas
from course_lib.workshop.roster import PREFIXED_GRANTS, Learner, Quota


class ProvisionError(RuntimeError):
    """The cluster refused part of the provisioning (the message says which learner and why)."""


class NoAuthorizer(ProvisionError):
    """The cluster has no authorizer: ACLs would be ignored and learners could touch everything."""


def check_authorizer(admin) -> None:
    """Raise :class:`NoAuthorizer` unless the cluster enforces ACLs (listing them needs one)."""
    from kafka.errors import SecurityDisabledError

    try:
        admin.describe_acls(_acl_filter(None))
    except SecurityDisabledError:
        raise NoAuthorizer(
            "this cluster has no authorizer, so ACLs would not isolate the learners (anyone could read, "
            "write or fence anyone's topics). Configure one on every broker and controller - "
            "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer, "
            "super.users=User:<instructor>, allow.everyone.if.no.acl.found=false - or start the lab "
            "cluster with LocalCluster(auth=ClusterAuth(...))"
        ) from None


def _acl_filter(principal):
    """Every ACL of ``principal`` (``None``: of anyone) on any resource."""
    from kafka.admin import (
        ACLFilter,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        ResourcePatternFilter,
        ResourceType,
    )

    return ACLFilter(
        principal,
        "*" if principal else None,
        ACLOperation.ANY,
        ACLPermissionType.ANY,
        ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY),
    )


def provision(admin, learners: list[Learner], passwords: dict[str, str], quota: Quota = Quota()) -> None:
    """Create each learner's SCRAM-SHA-512 user, their prefixed ACLs and their client quotas."""
    from kafka.admin import (
        ACL,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        ResourcePattern,
        ResourceType,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    errors = admin.alter_user_scram_credentials(
        [UserScramCredentialUpsertion(lr.name, ScramMechanism.SCRAM_SHA_512, passwords[lr.name]) for lr in learners]
    )
    failed = {u: e for u, e in errors.items() if e}
    if failed:
        raise ProvisionError(f"creating SCRAM users failed: {failed}")
    acls = [
        ACL(
            lr.principal,
            "*",
            ACLOperation[op],
            ACLPermissionType.ALLOW,
            ResourcePattern(ResourceType[rtype], lr.prefix, ACLResourcePatternType.PREFIXED),
        )
        for lr in learners
        for rtype, ops in PREFIXED_GRANTS
        for op in ops
    ]
    result = admin.create_acls(acls)
    if result.get("failed"):
        raise ProvisionError(f"creating ACLs failed: {result['failed']}")
    failed = alter_user_quotas(admin, {lr.name: lr.quota(quota).as_config() for lr in learners})
    if failed:
        raise ProvisionError(f"setting client quotas failed: {failed}")


def removal_plan(learners: list[Learner]) -> list[str]:
    """What :func:`unprovision` does (what ``remove --dry-run`` prints)."""
    lines = []
    for lr in learners:
        lines += [
            f"user {lr.name}: delete every ACL of {lr.principal}",
            f"user {lr.name}: delete the SCRAM-SHA-512 credentials",
            f"user {lr.name}: delete the client quotas",
            f"user {lr.name}: delete topics and consumer groups starting with {lr.prefix!r}",
            f"user {lr.name}: transactional ids starting with {lr.prefix!r} expire on their own "
            f"(transactional.id.expiration.ms; Kafka has no call to delete them)",
        ]
    return lines


def unprovision(admin, learners: list[Learner]) -> list[str]:
    """Remove learners: ACLs, user, quotas, then their topics and consumer groups. Returns what
    was done, one line each; a learner who is already gone is not an error."""
    from kafka.admin import ScramMechanism, UserScramCredentialDeletion

    done = []
    for lr in learners:
        acl_filter = _acl_filter(lr.principal)
        removed = sum(len(matches) for _, matches, _ in admin.delete_acls([acl_filter]))
        done.append(f"user {lr.name}: deleted {removed} ACL(s)")
    known = _scram_users(admin, [lr.name for lr in learners])
    gone = [lr for lr in learners if lr.name in known]
    if gone:
        errors = admin.alter_user_scram_credentials(
            [UserScramCredentialDeletion(lr.name, ScramMechanism.SCRAM_SHA_512) for lr in gone]
        )
        failed = {u: e for u, e in errors.items() if e}
        if failed:
            raise ProvisionError(f"deleting SCRAM users failed: {failed}")
    done += [
        f"user {lr.name}: deleted the SCRAM user" if lr in gone else f"user {lr.name}: no SCRAM user (already removed)"
        for lr in learners
    ]
    quotas = describe_user_quotas(admin, [lr.name for lr in learners])
    failed = alter_user_quotas(admin, {name: {k: None for k in q} for name, q in quotas.items() if q})
    if failed:
        raise ProvisionError(f"deleting client quotas failed: {failed}")
    done += [f"user {lr.name}: deleted {len(quotas.get(lr.name) or {})} client quota(s)" for lr in learners]
    topics = sorted(admin.list_topics())
    groups = sorted(g["group_id"] for g in admin.list_groups())
    for lr in learners:
        mine = [t for t in topics if t.startswith(lr.prefix)]
        if mine:
            admin.delete_topics(mine)
        done.append(f"user {lr.name}: deleted {len(mine)} topic(s)")
        theirs = [g for g in groups if g.startswith(lr.prefix)]
        if theirs:
            # {group: 'OK' or the error's name}; a group with members still connected is refused
            bad = {g: outcome for g, outcome in admin.delete_groups(theirs).items() if outcome != "OK"}
            if bad:
                raise ProvisionError(f"deleting consumer groups of {lr.name} failed: {bad}")
        done.append(f"user {lr.name}: deleted {len(theirs)} consumer group(s)")
    return done


def _scram_users(admin, names: list[str]) -> set[str]:
    """The SCRAM users of ``names`` that exist (an unknown user is answered with an error)."""
    return {u for u, info in admin.describe_user_scram_credentials(names).items() if not info["error"]}
