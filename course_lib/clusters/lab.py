"""The lab's broker profile: one set of Kafka broker settings, from which every cluster's preset
derives - the real :class:`~course_lib.real.cluster.LocalCluster`'s broker configuration, the
wire cluster's and the simulator's options (:func:`simulator_options`: ``ClusterOptions`` names
are Kafka's with underscores), so "the ISR shrinks" or "a killed broker is fenced" takes the same
time on each.

>>> simulator_options(FAILURE_DETECTION)
{'broker_session_timeout_ms': 3000, 'broker_heartbeat_interval_ms': 500, 'replica_lag_time_max_ms': 10000}
>>> simulator_options()["unclean_leader_election_enable"]
False
"""

from __future__ import annotations

from typing import Sequence

#: Broker settings chosen for a lab: small, fast to start, fast to notice failures.
LAB_BROKER_CONFIG: dict[str, object] = {
    "default.replication.factor": 3,
    "min.insync.replicas": 2,
    "offsets.topic.replication.factor": 3,
    "offsets.topic.num.partitions": 3,  # default 50: slow first consumer group on 2 cores
    "transaction.state.log.replication.factor": 3,
    "transaction.state.log.min.isr": 2,
    "transaction.state.log.num.partitions": 3,
    "share.coordinator.state.topic.replication.factor": 3,
    "share.coordinator.state.topic.min.isr": 2,
    "share.coordinator.state.topic.num.partitions": 1,
    # a share group may set its lock as short as 1 s (default floor 15 s), as the simulator and
    # lesson 05c do (share.record.lock.duration.ms is a group config)
    "group.share.min.record.lock.duration.ms": 1000,
    # and heartbeat every second (share.heartbeat.interval.ms, a group config; floor 5 s): a
    # member joining a share group gets its partitions at its next heartbeat, not 5 s later
    # (course_lib/experiments/on_kafka/share_groups.py; the default stays 5 s)
    "group.share.min.heartbeat.interval.ms": 1000,
    "group.initial.rebalance.delay.ms": 0,
    # A follower that stops fetching leaves the ISR after replica.lag.time.max.ms (the leader
    # shrinks it) - but a *paused* or killed broker also stops heartbeating, and in KRaft the
    # controller fences it after broker.session.timeout.ms and drops it from every ISR. With
    # these values a paused follower leaves the ISR after ~3 s (fencing), a slow one after 10 s.
    "replica.lag.time.max.ms": 10000,
    "broker.heartbeat.interval.ms": 500,
    "broker.session.timeout.ms": 3000,  # a killed broker is fenced after ~3 s, not 9 s
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": 5000,
    "unclean.leader.election.enable": "false",
    # the KRaft controller looks for leaderless partitions of unclean topics every 5 min by
    # default (an internal setting): every second here, so the lab sees the election happen
    "unclean.leader.election.interval.ms": 1000,
    "auto.leader.rebalance.enable": "false",  # leaders stay where the experiment put them
    "num.network.threads": 2,
    "num.io.threads": 2,
    "background.threads": 2,
    "num.replica.fetchers": 1,
}

#: the settings that decide how fast a failure is noticed (the ISR shrinks, a broker is fenced)
FAILURE_DETECTION = ("broker.session.timeout.ms", "broker.heartbeat.interval.ms", "replica.lag.time.max.ms")

#: the lab settings the simulated cluster models (the wire cluster's preset)
SIMULATED = (
    "min.insync.replicas",
    "group.initial.rebalance.delay.ms",
    *FAILURE_DETECTION,
    "transaction.abort.timed.out.transaction.cleanup.interval.ms",
    "unclean.leader.election.enable",
)


def _python(value: object) -> object:
    """A broker config value as the simulator's options take it (Kafka's "false" is False)."""
    return {"true": True, "false": False}.get(value, value) if isinstance(value, str) else value


def simulator_options(names: Sequence[str] = SIMULATED, config: dict[str, object] = LAB_BROKER_CONFIG) -> dict:
    """``ClusterOptions`` keyword arguments for the lab settings ``names``."""
    return {name.replace(".", "_"): _python(config[name]) for name in names}
