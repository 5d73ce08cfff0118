"""A third backend: kafka-python's real clients against the simulated cluster, over TCP.

:class:`WireBackend` is :class:`~course_lib.backend.KafkaBackend` - the adapter that runs every
scenario with kafka-python's ``KafkaProducer``/``KafkaConsumer`` and records their history -
pointed at :class:`WireLab`, which gives a :class:`~course_lib.wire.WireCluster` the shape of a
``LocalCluster`` (topics, partition metadata, kill/restart/pause/resume, the lost-ACK proxy). So
a scenario's three runs differ in one thing each: simulator clients vs kafka-python on the same
simulated brokers (a client difference), kafka-python on simulated vs real brokers (a broker
difference).

The simulated cluster takes the lab's broker settings (``LAB_BROKER_CONFIG``: min ISR 2, a
killed broker fenced after 3 s, groups assigned at once), and its clock is the wall clock, so
scenarios use their Kafka timings (``pick(kafka=...)``).

>>> from course_lib.scenarios import run_scenario
>>> with WireLab(seed=1) as lab:                                  # doctest: +SKIP
...     result = run_scenario("lost_ack_retry", backend=WireBackend(lab))
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..backend import BROKER_FAULTS, CLIENT_FAULTS, KafkaBackend
from ..history import INFO, Nemesis
from .cluster import WireCluster

#: ClusterOptions matching course_lib.real.cluster.LAB_BROKER_CONFIG
LAB_OPTIONS = {
    "min_insync_replicas": 2,
    "group_initial_rebalance_delay_ms": 0,
    "replica_lag_time_max_ms": 10000,
    "broker_heartbeat_interval_ms": 500,
    "broker_session_timeout_ms": 3000,
    "transaction_abort_timed_out_transaction_cleanup_interval_ms": 5000,
    "unclean_leader_election_enable": False,
}


class WireLabError(RuntimeError):
    pass


@dataclass
class _Node:
    """What KafkaBackend reads of a LocalCluster node: is it paused, does it run."""

    node_id: int
    lab: "WireLab"
    paused: bool = False

    def running(self) -> bool:
        return self.lab.wire.call(lambda: self.lab.wire.cluster.inspect_broker(self.node_id).up)


class WireLab:
    """A :class:`WireCluster` with the methods of ``LocalCluster`` that backends and scenarios use."""

    use_proxies = True  # lost ACKs and lost requests are available, as with LocalCluster's proxies

    def __init__(self, brokers: int = 3, seed: int = 0, **options):
        self.wire = WireCluster(brokers=brokers, seed=seed, **{**LAB_OPTIONS, **options})
        self.nodes = {b: _Node(b, self) for b in range(1, brokers + 1)}

    def start(self) -> "WireLab":
        self.wire.start()
        return self

    def stop(self) -> None:
        self.wire.stop()

    def __enter__(self) -> "WireLab":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<WireLab {self.wire!r}>"

    # ---- clients ------------------------------------------------------------------------------
    @property
    def bootstrap_servers(self) -> str:
        return self.wire.bootstrap_servers

    def client_config(self) -> dict:
        return {"bootstrap_servers": self.bootstrap_servers}

    def live_bootstrap_servers(self) -> str:
        """Like :attr:`bootstrap_servers` but only brokers that run and are not paused (as
        ``LocalCluster.live_bootstrap_servers``)."""
        cluster, ports, host = self.wire.cluster, self.wire.ports, self.wire.host

        def live() -> list[int]:
            return [
                b for b, seen in ((b, cluster.inspect_broker(b)) for b in sorted(ports)) if seen.up and not seen.paused
            ]

        return ",".join(f"{host}:{ports[b]}" for b in self.wire.call(live))

    # ---- names: one learner, one process - used as given ---------------------------------------
    def topic(self, name: str) -> str:
        return name

    def group_id(self, name: str) -> str:
        return name

    def transactional_id(self, name: str) -> str:
        return name

    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        replication_factor: int | None = None,
        min_insync_replicas: int | None = None,
        config: dict | None = None,
        timeout_s: float = 30.0,
    ) -> str:
        unclean = (config or {}).get("unclean.leader.election.enable")
        self.wire.create_topic(
            name,
            partitions,
            replication_factor,
            min_insync_replicas,
            None if unclean is None else str(unclean).lower() == "true",
            timeout_s=timeout_s,
        )
        return name

    def delete_topic(self, name: str, timeout_s: float = 30.0) -> None:
        self.wire.delete_topic(name, timeout_s=timeout_s)

    # ---- metadata (the controller's view, as LocalCluster reads it with the admin client) -------
    def _state(self, topic: str, partition: int):
        return self.wire.call(lambda: self.wire.cluster.inspect(topic, partition))  # ValueError: unknown

    def partitions_of(self, topic: str) -> list[int]:
        return list(range(self.wire.call(lambda: self.wire.cluster.topic_config(topic).partitions)))

    def partition_info(self, topic: str, partition: int = 0) -> dict:
        s = self._state(topic, partition)
        return {
            "partition_index": partition,
            "leader_id": -1 if s.leader is None else s.leader,
            "leader_epoch": s.leader_epoch,
            "replica_nodes": list(s.replicas),
            "isr_nodes": list(s.isr),
        }

    def leader_of(self, topic: str, partition: int = 0) -> int:
        return self.partition_info(topic, partition)["leader_id"]

    def isr_of(self, topic: str, partition: int = 0) -> list[int]:
        return sorted(self.partition_info(topic, partition)["isr_nodes"])

    def live_broker_ids(self) -> list[int]:
        cluster = self.wire.cluster
        return self.wire.call(lambda: [b for b in cluster.broker_ids if not cluster.inspect_broker(b).fenced])

    # ---- processes ----------------------------------------------------------------------------
    def kill(self, broker_id: int) -> None:
        self.wire.nemesis.crash(broker_id)
        self.nodes[broker_id].paused = False

    def pause(self, broker_id: int) -> None:
        self.wire.nemesis.pause(broker_id)
        self.nodes[broker_id].paused = True

    def resume(self, broker_id: int) -> None:
        self.wire.nemesis.resume(broker_id)
        self.nodes[broker_id].paused = False

    def restart(self, broker_id: int, timeout_s: float = 60.0, wait: bool = True) -> None:
        if self.nodes[broker_id].running():  # LocalCluster stops a running broker cleanly first
            self.wire.nemesis.crash(broker_id)
        self.wire.nemesis.restart(broker_id)
        if wait:
            self.wait_registered([broker_id], timeout_s)

    def wait_registered(self, broker_ids: list[int], timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if set(broker_ids) <= set(self.live_broker_ids()):
                return
            time.sleep(0.05)
        raise WireLabError(f"brokers {broker_ids} did not register within {timeout_s} s")

    def revive(self) -> list[int]:
        """Resume every paused broker, restart every crashed one; returns the restarted ids."""
        down = [b for b, node in self.nodes.items() if not node.running()]
        self.wire.nemesis.heal_all()
        for node in self.nodes.values():
            node.paused = False
        if down:
            self.wait_registered(down)
        return down

    # ---- the lab proxy's faults ---------------------------------------------------------------
    def _leader(self, topic: str, partition: int) -> int:
        leader = self.leader_of(topic, partition)
        if leader < 0:
            raise WireLabError(f"{topic}-{partition} has no leader right now")
        return leader

    def drop_next_produce_response(self, topic: str, partition: int = 0, count: int = 1) -> int:
        """The leader appends the next produce; its answer is lost and the connection closes (as
        the lab proxy does). Returns the leader's id."""
        leader = self._leader(topic, partition)
        for _ in range(count):
            self.wire.nemesis.lose_next_ack(broker_id=leader, close=True)
        return leader

    def spoil_next_produce_request(self, topic: str, partition: int = 0) -> int:
        leader = self._leader(topic, partition)
        self.wire.nemesis.spoil_next_request(leader)
        return leader


class WireBackend(KafkaBackend):
    """kafka-python on the simulated cluster (see the module docstring)."""

    kind = "wire"

    def __init__(self, lab: WireLab) -> None:
        super().__init__(lab)
        # this notebook runs the brokers (as a LocalCluster's) and their lab proxy's faults
        self.local = True
        # the simulator's fault schedules run on the simulation thread, at wall-clock ms
        self.faults = CLIENT_FAULTS | BROKER_FAULTS | {Nemesis.SCHEDULE}
        self.missing_reason = (
            "isolation is not a Backend operation over the wire yet (WireCluster.nemesis.isolate does it), "
            "and faults timed against a pipeline's steps need the simulator's clock (run_pipeline's "
            "timed actions run only inside wait() on a wall clock)"
        )

    @classmethod
    def fresh(cls, target) -> "WireBackend":
        """A new run on the same simulated cluster (``target``: a WireLab or a WireBackend)."""
        return cls(target.cluster if isinstance(target, KafkaBackend) else target)

    @classmethod
    def start(cls, seed: int = 0, brokers: int = 3, **options) -> "WireBackend":
        return cls(WireLab(brokers=brokers, seed=seed, **options).start())

    def describe(self) -> str:
        return "kafka-python on the simulated cluster (course_lib.wire)"

    def __repr__(self) -> str:
        return f"<WireBackend {self.cluster!r} run {self.run_id}>"

    # ---- the simulator's timed faults, on the simulation thread at wall-clock ms
    def schedule_faults(self, rng, duration_ms, kinds, faults, topic, producer) -> list:
        """Draw ``faults`` faults of ``kinds`` (None: every kind) over ``duration_ms`` from ``rng``
        - the draws of the simulator's ``schedule_faults``, so a seed gives the same schedule on
        both - and start them now on the wall clock, with their healing. Lost ACKs and requests
        are those of ``producer``'s connections (:class:`~course_lib.wire.nemesis.ScheduleTarget`);
        every fault is recorded in this run's history as it starts. Returns the schedule."""
        from ..nemesis import random_schedule

        schedule = random_schedule(rng, duration_ms, self.brokers, kinds, faults)
        return self.cluster.wire.nemesis.run_schedule(schedule, topic, producer.node_id, self._scheduled_fault)

    def _scheduled_fault(self, f: str, value) -> None:
        self.history.record("nemesis", INFO, f, value)
        node = self.cluster.nodes.get((value or {}).get("broker"))
        if node is not None and f in (Nemesis.PAUSE, Nemesis.RESUME, Nemesis.CRASH):
            node.paused = f == Nemesis.PAUSE  # what heal() reads to resume a paused broker

    def heal(self, timeout_ms: float = 60_000) -> None:
        """Cancel what is left of a fault schedule, heal the network, then resume and restart
        every broker and wait for the full ISRs (:meth:`KafkaBackend.heal`)."""
        nemesis = self.cluster.wire.nemesis
        nemesis.cancel()
        nemesis.heal()
        super().heal(timeout_ms)
