"""``python -m course_lib.wire --brokers 3 --seed 1``: a simulated Kafka on 127.0.0.1 for any
client (kafka-python, kcat, Java), with fault commands on stdin.

It prints ``bootstrap_servers=127.0.0.1:P1,...`` first; with ``--user NAME:PASSWORD`` (repeatable)
every listener is SASL_PLAINTEXT and one line per user follows, the kafka-python settings that
log that user in: ``client_config[ann]={"bootstrap_servers": ..., "security_protocol":
"SASL_PLAINTEXT", "sasl_mechanism": "SCRAM-SHA-512", ...}`` (``KafkaProducer(**json.loads(...))``).
``--config NAME=VALUE`` (repeatable) sets a Kafka broker config by Kafka's name
(``auto.create.topics.enable``, ``num.partitions``, ``default.replication.factor``,
``group.min.session.timeout.ms``, ...; :mod:`course_lib.broker.broker_config`). Then it reads one
command a line:

    crash 1 | restart 1 | pause 1 | resume 1        a broker process
    isolate 1                                        a network partition around broker 1
    lose_next_ack [broker] | lose_next_request [broker]   a produce answer / request lost
    refuse_next_request [broker]                     a produce request refused, retriable
    heal | heal_all                                  undo network faults / everything
    schedule SECONDS [SEED] [TOPIC]                  seeded random faults from now on (the
                                                     simulator's schedules, course_lib.nemesis;
                                                     with a TOPIC also those aimed at its leader)
    topic NAME [PARTITIONS] [MIN_ISR]                create a topic (RF = min(3, brokers);
                                                     partitions: num.partitions)
    delete_topic NAME                                delete a topic (DeleteTopics)
    state                                            leaders, ISR and HW of every partition
    quit                                             stop everything

End of input stops it too when stdin is a terminal (Ctrl-D). When it is not - redirected or piped,
as in ``python -m course_lib.wire --brokers 3 --seed 1 < /dev/null &`` in a script or a CI job -
the cluster keeps serving after the input ends, until SIGTERM or SIGINT (``kill PID``), and exits
cleanly (status 0) on either, at any time.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import signal
import sys
import threading
import time

from kafka import errors as Errors

from ..clusters import FAULTS, Aim
from .cluster import WireCluster
from .sasl import DEFAULT_MECHANISMS, MECHANISMS

#: the nemesis's faults, by what they aim at (the rows of course_lib.clusters.faults): a broker
#: (isolate, too: the wire network partitions brokers), and a broker's next produce (none: any)
BROKER_COMMANDS = tuple(f.hook for f in FAULTS if f.aim in (Aim.BROKER, Aim.NODE))
MESSAGE_COMMANDS = tuple(f.hook for f in FAULTS if f.aim is Aim.PRODUCE)


def main(argv: list[str] | None = None, stdin=None, stdout=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_lib.wire", description=__doc__.split("\n\n")[0])
    parser.add_argument("--brokers", type=int, default=3, help="number of simulated brokers (default 3)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the simulation (default 1)")
    parser.add_argument("--base-port", type=int, default=None, help="broker b listens on BASE_PORT + b - 1 if free")
    parser.add_argument("--topic", action="append", default=[], metavar="NAME[:PARTITIONS[:MIN_ISR]]")
    parser.add_argument(
        "--user", action="append", default=[], metavar="NAME:PASSWORD", help="a SASL user (makes listeners SASL)"
    )
    parser.add_argument(
        "--sasl-mechanism",
        action="append",
        choices=MECHANISMS,
        help="an enabled SASL mechanism, repeatable (default: SCRAM-SHA-512 and PLAIN)",
    )
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a Kafka broker config, repeatable (e.g. --config num.partitions=4 --config auto.create.topics.enable=false)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log unsupported requests and faults")
    args = parser.parse_args(argv)
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr)
    if args.brokers < 1:
        parser.error("--brokers must be >= 1")
    users = dict(_user(parser, spec) for spec in args.user)
    if args.sasl_mechanism and not users:
        parser.error("--sasl-mechanism needs at least one --user NAME:PASSWORD")
    config = dict(_config(parser, spec) for spec in args.config)
    config.setdefault("group.initial.rebalance.delay.ms", "0")
    try:
        wire = WireCluster(
            brokers=args.brokers,
            seed=args.seed,
            base_port=args.base_port,
            users=users or None,
            sasl_mechanisms=tuple(args.sasl_mechanism or DEFAULT_MECHANISMS),
            config=config,
        )
    except ValueError as exc:  # a config Kafka has no such name or value for
        parser.error(f"--config: {exc}")
    with wire, _stopped_by_signals():
        for spec in args.topic:
            print(run_command(wire, ["topic", *spec.split(":")]), file=sys.stderr)
        print(f"bootstrap_servers={wire.bootstrap_servers}", file=stdout, flush=True)
        if wire.sasl is not None:  # what a client of each user needs
            for user in wire.sasl.users:
                settings = {"bootstrap_servers": wire.bootstrap_servers, **wire.sasl.client_config(user)}
                print(f"client_config[{user}]={json.dumps(settings)}", file=stdout, flush=True)
        if _read_commands(wire, stdin, stdout) == "end of input" and _serves_after_input_ends(stdin):
            print("end of input: serving until SIGTERM or SIGINT", file=sys.stderr, flush=True)
            while True:
                time.sleep(3600)
    return 0


def _read_commands(wire: WireCluster, stdin, stdout) -> str:
    """Run one command a line; returns why it stopped: ``"quit"`` or ``"end of input"``."""
    for line in stdin:
        words = line.split()
        if not words:
            continue
        if words[0] in ("quit", "exit"):
            return "quit"
        try:
            print(run_command(wire, words), file=stdout, flush=True)
        except (ValueError, TypeError, RuntimeError, Errors.KafkaError) as exc:  # e.g. a topic that exists
            print(f"error: {exc}", file=stdout, flush=True)
    return "end of input"


def _serves_after_input_ends(stdin) -> bool:
    """End of input is a ``quit`` on a terminal (Ctrl-D). A redirected or piped stdin ends at once
    (``< /dev/null``) or when its writer is done, while the clients still want the cluster: it
    keeps serving until a signal stops it. Only the main thread can wait for a signal; a stdin that
    is no file (an iterator of lines, as a test passes in-process) ends like a ``quit``."""
    isatty = getattr(stdin, "isatty", None)
    return isatty is not None and not isatty() and threading.current_thread() is threading.main_thread()


class _Stop(Exception):
    """SIGTERM arrived: leave the ``with`` blocks, so the cluster stops and its ports close."""


class _stopped_by_signals:
    """SIGTERM and SIGINT end the block quietly (the cluster is stopped by the enclosing ``with``).
    In the main thread only (the only one signals reach); the previous handler comes back after."""

    def __enter__(self):
        self.previous = None
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGTERM, _raise_stop)
        return self

    def __exit__(self, kind, exc, tb) -> bool:
        if self.previous is not None:
            signal.signal(signal.SIGTERM, self.previous)
        return kind is not None and issubclass(kind, (_Stop, KeyboardInterrupt))


def _raise_stop(signum, frame) -> None:
    raise _Stop


def _user(parser, spec: str) -> tuple[str, str]:
    name, sep, password = spec.partition(":")
    if not sep or not name or not password:
        parser.error(f"--user {spec!r}: expected NAME:PASSWORD, e.g. --user ann:ann-secret")
    return name, password


def _config(parser, spec: str) -> tuple[str, str]:
    name, sep, value = spec.partition("=")
    if not sep or not name.strip():
        parser.error(f"--config {spec!r}: expected NAME=VALUE, e.g. --config num.partitions=4")
    return name.strip(), value.strip()


def run_command(wire: WireCluster, words: list[str]) -> str:
    command, args = words[0], words[1:]
    nemesis = wire.nemesis
    if command in BROKER_COMMANDS:
        if len(args) != 1 or not args[0].isdigit() or int(args[0]) not in wire.ports:
            raise ValueError(f"usage: {command} BROKER (one of {sorted(wire.ports)})")
        getattr(nemesis, command)(int(args[0]))
        return f"ok {command} {args[0]}"
    if command in MESSAGE_COMMANDS:
        broker = int(args[0]) if args else None
        getattr(nemesis, command)(broker_id=broker)
        return f"ok {command}" + (f" {broker}" if broker is not None else "")
    if command in ("heal", "heal_all"):
        getattr(nemesis, command)()
        return f"ok {command}"
    if command == "schedule":
        if not args or len(args) > 3:
            raise ValueError("usage: schedule SECONDS [SEED] [TOPIC]")
        seed = int(args[1]) if len(args) > 1 else None
        plan = nemesis.random_schedule(float(args[0]), seed=seed, topic=args[2] if len(args) > 2 else None)
        return "ok schedule " + json.dumps([dataclasses.asdict(fault) for fault in plan])
    if command == "topic":
        if not args:
            raise ValueError("usage: topic NAME [PARTITIONS] [MIN_ISR]")
        partitions = int(args[1]) if len(args) > 1 else -1  # -1: the broker's num.partitions
        min_isr = int(args[2]) if len(args) > 2 else None
        wire.create_topic(args[0], partitions, min_insync_replicas=min_isr)
        return f"ok topic {args[0]}"
    if command == "delete_topic":
        if len(args) != 1:
            raise ValueError("usage: delete_topic NAME")
        wire.delete_topic(args[0])
        return f"ok delete_topic {args[0]}"
    if command == "state":
        return json.dumps(wire.call(wire.cluster.state), default=str)
    raise ValueError(
        f"unknown command {command!r}: {'|'.join(BROKER_COMMANDS)} BROKER, {'|'.join(MESSAGE_COMMANDS)} [BROKER], "
        "heal, heal_all, schedule SECONDS [SEED] [TOPIC], topic NAME [PARTITIONS] [MIN_ISR], delete_topic NAME, state, quit"
    )


if __name__ == "__main__":
    sys.exit(main())
