"""Use an existing Kafka cluster instead of the local one - e.g. one cluster for a whole workshop.

Reading ``KAFKA_BOOTSTRAP_SERVERS`` (a running cluster is needed, so this example is skipped
when the doctests run):

    >>> kafka = connect()                       # doctest: +SKIP
    >>> kafka.topic("orders")                   # doctest: +SKIP
    'alice.orders'

Many learners share the cluster, so every name a learner's code uses goes through a per-learner
prefix (``COURSE_LEARNER_PREFIX``, or the argument, or the login name): :meth:`topic`,
:meth:`group_id`, :meth:`transactional_id`. Two learners running the same notebook then never
read each other's records, join each other's groups or fence each other's transactions.

On a workshop cluster every learner also logs in (SASL SCRAM). The settings come from, in this
order: the arguments; a connection file (``connect(env_file="ann.env")`` or the file named by
``$COURSE_CONNECTION_FILE``, written by ``python -m course_lib.workshop``); the environment::

    KAFKA_BOOTSTRAP_SERVERS=host:port   KAFKA_SASL_MECHANISM=SCRAM-SHA-512
    KAFKA_SASL_USERNAME=ann             KAFKA_SASL_PASSWORD=...
    COURSE_LEARNER_PREFIX=ann           (optional) SPARK_REMOTE=sc://host:15002

:meth:`RemoteCluster.client_config` is what every client the course builds is given; a
learner's own ``KafkaProducer(**kafka.client_config())`` connects the same way.

Faults that need broker processes on this machine (killing, pausing brokers) are only possible
with :class:`~course_lib.real.cluster.LocalCluster`; here they raise :class:`NeedsLocalCluster`
saying so. Losing an ACK or a request needs no broker: every client of a :class:`RemoteCluster`
talks through a SOCKS5 proxy in this process (:class:`~course_lib.real.proxy.SocksKafkaProxy`),
so :meth:`RemoteCluster.lose_next_ack` loses this learner's next ACK only.

Taught in notebooks/09_real_kafka_lab.
"""

from __future__ import annotations

import getpass
import os
import re
from pathlib import Path

from course_lib.clusters import BrokerFaultsElsewhere, CreatesTopics, Fault, MessageFaultsAtLeader, Part, TopicSpec
from course_lib.clusters.parts import MIN_ISR
from course_lib.real.admin import ClusterAdmin, ClusterMetadata

ENV_BOOTSTRAP = "KAFKA_BOOTSTRAP_SERVERS"
ENV_PREFIX = "COURSE_LEARNER_PREFIX"
ENV_MECHANISM = "KAFKA_SASL_MECHANISM"
ENV_USERNAME = "KAFKA_SASL_USERNAME"
ENV_PASSWORD = "KAFKA_SASL_PASSWORD"
ENV_SECURITY_PROTOCOL = "KAFKA_SECURITY_PROTOCOL"  # optional: SASL_SSL for a cluster behind TLS
ENV_SPARK_REMOTE = "SPARK_REMOTE"
ENV_CONNECTION_FILE = "COURSE_CONNECTION_FILE"
#: every setting a connection file may hold (what ``python -m course_lib.workshop`` writes)
SETTINGS = (
    ENV_BOOTSTRAP,
    ENV_MECHANISM,
    ENV_USERNAME,
    ENV_PASSWORD,
    ENV_PREFIX,
    ENV_SECURITY_PROTOCOL,
    ENV_SPARK_REMOTE,
)
MECHANISMS = ("SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN")


class NeedsLocalCluster(RuntimeError):
    """A fault was asked of a cluster this notebook does not run itself."""


class ConnectionSettingsError(ValueError):
    """Connection settings that cannot work (the message says which one and how to fix it)."""


def read_connection_file(path: str | os.PathLike) -> dict[str, str]:
    """``KEY=value`` lines of a connection file (``#`` comments, blank lines, ``export`` and
    quotes around values allowed - it can be ``source``-d by a shell too)."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise ConnectionSettingsError(
            f"connection file {str(p)!r} does not exist (ask your instructor for your <name>.env file, "
            f"or check ${ENV_CONNECTION_FILE})"
        )
    out: dict[str, str] = {}
    for lineno, raw in enumerate(p.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.removeprefix("export ").partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key:
            raise ConnectionSettingsError(f"{p}:{lineno}: expected KEY=value, got {raw!r}")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if key not in SETTINGS:
            raise ConnectionSettingsError(f"{p}:{lineno}: unknown setting {key!r}; known: {', '.join(SETTINGS)}")
        out[key] = value
    return out


def connection_settings(env_file: str | os.PathLike | None = None, environ=None) -> dict[str, str]:
    """The learner's settings: the environment, overridden by the connection file if there is
    one (``env_file``, else ``$COURSE_CONNECTION_FILE``): a file names one learner exactly."""
    environ = os.environ if environ is None else environ
    settings = {k: environ[k] for k in SETTINGS if environ.get(k)}
    path = env_file or environ.get(ENV_CONNECTION_FILE)
    if path:
        settings.update(read_connection_file(path))
    return settings


def learner_prefix(prefix: str | None = None) -> str:
    """The namespace of this learner: the argument, ``$COURSE_LEARNER_PREFIX`` or the login name.

    Only letters, digits, ``.``, ``_`` and ``-`` are legal in Kafka topic names, so anything else
    becomes ``-``.

    >>> learner_prefix("Ada Lovelace")
    'Ada-Lovelace'
    """
    raw = prefix if prefix is not None else os.environ.get(ENV_PREFIX)
    if raw is None:
        try:
            raw = getpass.getuser()
        except Exception:  # no login name in some containers
            raw = "learner"
    clean = re.sub(r"[^A-Za-z0-9._-]+", "-", raw).strip("-.")
    if not clean:
        raise ValueError(f"learner prefix {raw!r} has no usable characters; use letters/digits")
    return clean


class Namespaced:
    """Names a learner's code uses, prefixed so that learners sharing a cluster stay apart."""

    prefix: str = ""

    def _name(self, name: str) -> str:
        # idempotent: a name that already carries the prefix (from an earlier topic() call)
        # is not prefixed twice
        if not self.prefix or name.startswith(f"{self.prefix}."):
            return name
        return f"{self.prefix}.{name}"

    def topic(self, name: str) -> str:
        return self._name(name)

    def group_id(self, name: str) -> str:
        return self._name(name)

    def transactional_id(self, name: str) -> str:
        return self._name(name)


class RemoteCluster(CreatesTopics, BrokerFaultsElsewhere, MessageFaultsAtLeader, Namespaced, ClusterMetadata):
    """A cluster someone else runs: produce, consume, create topics - no broker faults.

    ``username``/``password``: the learner's SASL login (``mechanism`` SCRAM-SHA-512 unless
    the instructor says otherwise); without them the cluster is reached unauthenticated.
    """

    def __init__(
        self,
        bootstrap_servers: str,
        prefix: str,
        username: str | None = None,
        password: str | None = None,
        mechanism: str = "SCRAM-SHA-512",
        security_protocol: str | None = None,
        fault_proxy: bool = True,
    ) -> None:
        self.bootstrap_servers = bootstrap_servers
        #: lost ACKs / requests through a proxy in this process (started with the first client)
        self._proxy = None
        self.spark_remote: str | None = None
        self.prefix = prefix
        self.username = username
        self._password = password
        self.mechanism = mechanism
        self.security_protocol = security_protocol or ("SASL_PLAINTEXT" if username else "PLAINTEXT")
        # the proxy reads Kafka's framing to find produce responses; TLS hides it
        self.message_faults = fault_proxy and not self.security_protocol.endswith("SSL")
        #: topics, partitions, leaders, ISR - read as on a local cluster (one attempt each here)
        self.metadata = ClusterAdmin(self.admin, explained=self.explained)

    def __repr__(self) -> str:
        who = f", user={self.username!r}" if self.username else ""
        return f"RemoteCluster({self.bootstrap_servers!r}, prefix={self.prefix!r}{who})"

    def client_config(self) -> dict:
        """kafka-python keyword arguments for this cluster: address and (if any) SASL login.

        >>> RemoteCluster("k:9092", "ann", "ann", "pw").client_config()["sasl_mechanism"]
        'SCRAM-SHA-512'
        """
        config: dict = {"bootstrap_servers": self.bootstrap_servers, "security_protocol": self.security_protocol}
        if self.message_faults:
            config["proxy_url"] = self.fault_proxy().url
        if self.username:
            config.update(
                sasl_mechanism=self.mechanism,
                sasl_plain_username=self.username,
                sasl_plain_password=self._password,
            )
        return config

    def java_client_properties(self) -> dict[str, str]:
        """The same connection for a Java Kafka client (Spark's Kafka source and sink take them
        with a ``kafka.`` prefix); Java clients connect directly, not through the fault proxy.

        >>> RemoteCluster("k:9092", "ann", "ann", "pw").java_client_properties()["sasl.jaas.config"]
        'org.apache.kafka.common.security.scram.ScramLoginModule required username="ann" password="pw";'
        """
        props = {"bootstrap.servers": self.bootstrap_servers, "security.protocol": self.security_protocol}
        if self.username:
            module = (
                "org.apache.kafka.common.security.plain.PlainLoginModule"
                if self.mechanism == "PLAIN"
                else "org.apache.kafka.common.security.scram.ScramLoginModule"
            )
            props["sasl.mechanism"] = self.mechanism
            props["sasl.jaas.config"] = f'{module} required username="{self.username}" password="{self._password}";'
        return props

    def fault_proxy(self):
        """This learner's SOCKS5 proxy in front of the cluster (started on first use)."""
        if not self.message_faults:
            if self.security_protocol.endswith("SSL"):
                raise NeedsLocalCluster(
                    f"Losing a message in flight needs a proxy that reads Kafka's messages; this "
                    f"cluster is reached over TLS ({self.security_protocol}), which hides them. Use "
                    f"LocalCluster(), or skip this experiment - its results are described in the notebook."
                )
            self._local_only("Dropping messages in flight")
        if self._proxy is None:
            from course_lib.real.proxy import SocksKafkaProxy

            self._proxy = SocksKafkaProxy()
        return self._proxy

    def close(self) -> None:
        """Stop this handle's proxy (clients built from it cannot connect afterwards)."""
        if self._proxy is not None:
            self._proxy.close()
            self._proxy = None

    @property
    def _who(self) -> tuple[str | None, str]:
        return self.username, self.prefix

    def producer(self, **config):
        """A kafka-python ``KafkaProducer`` on this cluster (errors name the resource refused)."""
        from course_lib.client_adapters.learner import LearnerProducer

        return LearnerProducer(course_who=self._who, **{**self.client_config(), **config})

    def consumer(self, *topics: str, **config):
        """A kafka-python ``KafkaConsumer`` on this cluster (errors name the resource refused)."""
        from course_lib.client_adapters.learner import LearnerConsumer

        return LearnerConsumer(*topics, course_who=self._who, **{**self.client_config(), **config})

    def explained(self, **used):
        """Context manager: Kafka's authorization and login errors inside become
        :class:`~course_lib.client_adapters.access.AccessDenied` / ``LoginFailed`` that say what to fix."""
        from course_lib.client_adapters.access import explained

        return explained(self.username, self.prefix, bootstrap_servers=self.bootstrap_servers, **used)

    def admin(self, **kwargs):
        from .admin_client import AdminClient

        kwargs.setdefault("request_timeout_ms", 15000)
        kwargs.setdefault("bootstrap_timeout_ms", 15000)  # a wrong password is reported after 15 s, not 30
        with self.explained():
            return AdminClient(client_id=f"course-admin-{self.prefix}", **{**self.client_config(), **kwargs})

    def create_from(self, spec: TopicSpec) -> str:
        """Create ``prefix.name`` (RF=min(3, brokers), min.insync.replicas=RF-1) and return its name.

        An existing topic is kept (rerunning a notebook cell is fine).
        """
        rf = spec.replication_factor or min(3, len(self.live_broker_ids()))
        min_isr = spec.min_insync_replicas or max(1, rf - 1)
        full = TopicSpec(self.topic(spec.name), spec.partitions, rf, {**spec.config, MIN_ISR: str(min_isr)})
        return self.metadata.create_from(full, self.topic_timeout_s)

    # ---- the cluster's parts (course_lib.clusters): topology, and message faults through a proxy
    label = "kafka"
    description = "real Kafka (RemoteCluster)"
    topic_timeout_s = 30.0

    def missing_parts(self) -> dict[str, str]:
        elsewhere = (
            f"its brokers run elsewhere ({self.bootstrap_servers}, e.g. a shared workshop cluster): "
            f"this notebook cannot signal their processes (broker faults are the instructor's: "
            f"python -m course_lib.workshop broker ...); use LocalCluster() for these"
        )
        missing = {
            part: elsewhere
            for part in (Part.BROKER_FAULTS, Part.FAULT_SCHEDULES, Part.NETWORK_PARTITIONS, Part.VIRTUAL_TIME)
        }
        if not self.message_faults:
            missing.update(dict.fromkeys((Part.MESSAGE_FAULTS, Part.LOST_REQUESTS, Part.REFUSED_REQUESTS), elsewhere))
        return missing

    def broker_ids(self) -> list[int]:
        return self.live_broker_ids()

    # ---- faults: only on a cluster this process runs ---------------------------------------
    def _refused_fault(self, fault: Fault) -> NeedsLocalCluster:
        return self._needs_local(f"A broker fault ({fault.name})")

    def _local_only(self, what: str):
        raise self._needs_local(what)

    def _needs_local(self, what: str) -> NeedsLocalCluster:
        return NeedsLocalCluster(
            f"{what} needs a Kafka cluster started by this notebook: it sends signals to broker "
            f"processes (ask your instructor: they run the shared cluster). You are connected to "
            f"{self.bootstrap_servers}, which runs elsewhere. Use "
            f"`from course_lib.real.cluster import LocalCluster` (Java 17+ and Maven needed), "
            f"or skip this experiment - its results are described in the notebook."
        )

    def stop(self, broker_id: int | None = None):
        if broker_id is None:
            return  # nothing to stop: we never started it
        self._local_only("Stopping a broker")

    def proxy(self, broker_id: int | None = None):
        """The proxy all of this learner's connections go through (one for every broker)."""
        return self.fault_proxy()

    def _message_fault(self, fault: Fault, topic: str, partition: int, followed: bool = False) -> int:
        """Arm the proxy all of this learner's connections go through (:data:`course_lib.real.proxy.MECHANISMS`):
        the fault is this learner's clients' alone. Returns the partition's leader."""
        proxy = self.fault_proxy()  # first: a handle without one refuses before any network call
        leader = self.leader_of(topic, partition)
        proxy.arm(fault.op, followed)
        return leader


def connect(
    bootstrap_servers: str | None = None,
    prefix: str | None = None,
    *,
    username: str | None = None,
    password: str | None = None,
    env_file: str | os.PathLike | None = None,
    fault_proxy: bool = True,
) -> RemoteCluster:
    """A handle on an existing cluster; settings from the arguments, else the connection file
    (``env_file`` or ``$COURSE_CONNECTION_FILE``), else the environment (module docstring).

    The prefix defaults to ``COURSE_LEARNER_PREFIX``, else the login user (the workshop grants
    each user the names under ``<user>.``), else the machine's login name. ``fault_proxy``:
    route this learner's clients through a proxy in this process (lost ACKs, lost requests).
    """
    s = connection_settings(env_file)
    servers = bootstrap_servers or s.get(ENV_BOOTSTRAP)
    if not servers:
        raise ConnectionSettingsError(
            f"No cluster given: pass connect('host:9092'), set {ENV_BOOTSTRAP}=host:9092, or "
            f"connect(env_file='<your name>.env') with the file your instructor gave you. To run a "
            f"cluster on this machine instead, use LocalCluster()."
        )
    user = username or s.get(ENV_USERNAME)
    secret = password if password is not None else s.get(ENV_PASSWORD)
    mechanism = s.get(ENV_MECHANISM, MECHANISMS[0]).upper()
    if user and not secret:
        raise ConnectionSettingsError(f"user {user!r} has no password: set {ENV_PASSWORD} (or pass password=...)")
    if secret and not user:
        raise ConnectionSettingsError(f"a password is set but no user name: set {ENV_USERNAME} (or pass username=...)")
    if mechanism not in MECHANISMS:
        raise ConnectionSettingsError(
            f"{ENV_MECHANISM}={mechanism!r} is not supported; use one of {', '.join(MECHANISMS)}"
        )
    protocol = s.get(ENV_SECURITY_PROTOCOL)
    if protocol and protocol not in ("PLAINTEXT", "SASL_PLAINTEXT", "SASL_SSL", "SSL"):
        raise ConnectionSettingsError(
            f"{ENV_SECURITY_PROTOCOL}={protocol!r} is not a Kafka security protocol "
            f"(PLAINTEXT, SASL_PLAINTEXT, SASL_SSL, SSL)"
        )
    raw_prefix = prefix if prefix is not None else s.get(ENV_PREFIX) or user
    cluster = RemoteCluster(servers, learner_prefix(raw_prefix), user, secret, mechanism, protocol, fault_proxy)
    cluster.spark_remote = s.get(ENV_SPARK_REMOTE)  # for the Spark lab (notebook 10), if given
    if user:  # in a notebook, any client's authorization error reads as AccessDenied
        from course_lib.client_adapters.access import show_in_notebook

        show_in_notebook(user, cluster.prefix)
    return cluster
