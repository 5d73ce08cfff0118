"""Apply a roster to a cluster: SCRAM users and prefixed ACLs, through the Kafka admin API.

Both operations are upserts on the broker side (setting a SCRAM credential again replaces it;
creating an ACL that exists is a no-op), so running provisioning twice changes nothing.
"""

from __future__ import annotations

from course_lib.workshop.roster import PREFIXED_GRANTS, Learner


class ProvisionError(RuntimeError):
    """The cluster refused part of the provisioning (the message says which learner and why)."""


def provision(admin, learners: list[Learner], passwords: dict[str, str]) -> None:
    """Create each learner's SCRAM-SHA-512 user and their prefixed ACLs."""
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
