"""What a configuration guarantees: the anomalies a producer/topic configuration, or a consuming
application's semantics, permit - each with the reason, in kafka-python's terms.

The checker (:mod:`course_lib.checker`) judges every anomaly it finds against these rules: an
allowed one is the configuration's known trade-off, any other violates its guarantee.

Taught in notebooks/02_acks_and_durability and notebooks/05_consumer_delivery_semantics.
"""

from __future__ import annotations

import warnings

from .client_config import resolve_producer_config


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
