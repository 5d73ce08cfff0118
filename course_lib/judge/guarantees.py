"""What a configuration guarantees: the anomalies a producer/topic configuration, or a consuming
application's semantics, permit - each with the reason, in kafka-python's terms.

The checker (:mod:`course_lib.judge.checker`) judges every anomaly it finds against these rules: an
allowed one is the configuration's known trade-off, any other violates its guarantee.

Taught in notebooks/02_acks_and_durability and notebooks/05_consumer_delivery_semantics.
"""

from __future__ import annotations

import warnings

from ..client_config import resolve_producer_config


def _effective_producer_config(producer: dict | None) -> dict:
    user = {k: v for k, v in (producer or {}).items() if k != "bootstrap_servers"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return resolve_producer_config(**user)


def _topic_settings(topic) -> dict:
    if topic is None or isinstance(topic, dict):
        return topic or {}
    return {
        name: getattr(topic, name)
        for name in ("min_insync_replicas", "unclean_leader_election_enable")
        if hasattr(topic, name)
    }


def allowed_anomalies(producer: dict | None = None, topic=None) -> dict[str, str]:
    """Which anomalies this producer/topic configuration allows, each with the reason.

    ``producer`` is the keyword arguments given to ``KafkaProducer`` (kafka-python's names and
    defaults apply); ``topic`` has ``min_insync_replicas`` and ``unclean_leader_election_enable``
    (a dict or the simulator's ``TopicConfig``).

    >>> sorted(allowed_anomalies({"acks": 1, "enable_idempotence": False}))
    ['duplicate', 'lost', 'reordered']
    >>> allowed_anomalies({})   # kafka-python 3 defaults: acks='all', idempotent
    {}
    """
    config = _effective_producer_config(producer)
    topic = _topic_settings(topic)
    allowed: dict[str, str] = {}
    acks = config["acks"]
    if acks == 0:
        allowed["lost"] = (
            "acks=0: the producer never hears back, so a record that dies with a broker "
            "(or in the network) is gone without anyone knowing"
        )
    elif acks == 1:
        allowed["lost"] = (
            "acks=1: the leader acknowledges before any follower has the record; if it "
            "dies before they fetch it, a follower without it becomes leader"
        )
    if topic.get("unclean_leader_election_enable"):
        allowed.setdefault(
            "lost",
            "unclean.leader.election.enable: an out-of-sync replica may become "
            "leader and the records it never had are dropped",
        )
    retrying = acks != 0 and config["retries"] > 0
    if retrying and not config["enable_idempotence"]:
        allowed["duplicate"] = (
            "retries without idempotence: when an ACK is lost the producer sends "
            "the batch again and the broker appends it a second time"
        )
        if config["max_in_flight_requests_per_connection"] > 1:
            allowed["reordered"] = (
                "retries with max_in_flight_requests_per_connection > 1 and no "
                "idempotence: a later batch can be appended before a retried "
                "earlier one"
            )
    return allowed


CONSUMER_SEMANTICS = {
    "at-most-once": {
        "lost_in_processing": "at-most-once commits the offsets before processing: a crash in "
        "between skips those messages"
    },
    "at-least-once": {
        "duplicate_processing": "at-least-once processes before committing: a crash in between "
        "processes those messages again"
    },
    "auto-commit": {
        "lost_in_processing": "auto-commit commits what poll() returned, processed or not",
        "duplicate_processing": "auto-commit commits only every auto_commit_interval_ms: a crash "
        "replays everything since the last one",
    },
    "exactly-once-external": {},
    "exactly-once-kafka": {},
}


def allowed_consumer_anomalies(semantics: str | None, isolation_level: str | None = "read_uncommitted") -> dict:
    """Which processing anomalies a consuming application's semantics allow.

    >>> sorted(allowed_consumer_anomalies("at-least-once", "read_committed"))
    ['duplicate_processing']
    """
    if semantics is not None and semantics not in CONSUMER_SEMANTICS:
        raise ValueError(f"semantics must be one of {sorted(CONSUMER_SEMANTICS)}, got {semantics!r}")
    allowed = dict(CONSUMER_SEMANTICS.get(semantics, {})) if semantics is not None else {}
    if isolation_level != "read_committed":
        allowed["aborted_read"] = "read_uncommitted consumers see records of open and aborted transactions"
        allowed["uncommitted_read"] = allowed["aborted_read"]
    return allowed


def allowed_share_anomalies(acknowledgement_mode: str = "implicit", delivery_count_limit: int = 5) -> dict:
    """What a share group (KIP-932) allows: one semantic for every configuration - at least once
    per record, up to ``group.share.delivery.count.limit`` deliveries, in no particular order.

    >>> sorted(allowed_share_anomalies("explicit"))
    ['archived', 'duplicate_processing', 'redelivered', 'reordered_across_workers']
    >>> "lost_in_processing" in allowed_share_anomalies("implicit")
    True
    """
    if acknowledgement_mode not in ("implicit", "explicit"):
        raise ValueError(f"acknowledgement_mode must be 'implicit' or 'explicit', got {acknowledgement_mode!r}")
    allowed = {
        "redelivered": "share groups deliver each record at least once: a record whose lock expires (a slow "
        "or crashed worker), that a worker releases, or that was held when its leader failed over is "
        "delivered again",
        "duplicate_processing": "share groups are at-least-once per record: a worker that processed a record "
        "but did not get its ACCEPT to the broker before the lock expired sees another worker process it again",
        "archived": f"after group.share.delivery.count.limit ({delivery_count_limit}) deliveries a record is "
        f"archived - given up on purpose, so a poison message cannot block the others; REJECT archives at once",
        "reordered_across_workers": "share groups promise no order: several workers take records of one "
        "partition at once, and a redelivered record comes after later ones",
    }
    if acknowledgement_mode == "implicit":
        allowed["lost_in_processing"] = (
            "implicit acknowledgement accepts every record of a poll at the next poll(): a record whose "
            "handler failed is accepted all the same"
        )
    return allowed
