"""The instructor's command for a workshop on one shared Kafka cluster.

``python -m course_lib.workshop ROSTER --bootstrap HOST:PORT --out DIR [--dry-run]``
    provisions every learner of the roster (SCRAM user, prefixed ACLs, client quotas) and writes
    ``DIR/<name>.env``; running it again changes nothing.
``python -m course_lib.workshop remove NAME... --bootstrap HOST:PORT [--dry-run]``
    removes learners: their quotas, ACLs, user, topics and consumer groups.
``python -m course_lib.workshop cluster --dir DIR [--brokers 3] [--listen HOST] [--advertise HOST]``
    runs an authenticated :class:`~course_lib.real.cluster.LocalCluster` on this machine until
    Ctrl-C (the instructor's workshop cluster). ``--listen`` is the address the brokers' client
    ports bind (default 127.0.0.1: a hub on the same host; ``0.0.0.0`` on a VM of its own),
    ``--advertise`` the address the hub's learners connect to (default: the listen address).
``python -m course_lib.workshop broker kill|stop|restart|pause|resume|status [ID] --cluster-dir DIR``
    broker faults on that cluster, from another terminal.

The instructor's password comes from ``KAFKA_INSTRUCTOR_PASSWORD`` (not a command-line argument:
those end up in shell history and ``ps``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from course_lib.workshop.roster import Learner, Quota, RosterError, plan, read_roster

PASSWORD_ENV = "KAFKA_INSTRUCTOR_PASSWORD"


class CommandError(RuntimeError):
    """Something the instructor must fix; printed as ``error: ...`` with exit status 2."""


def _common(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--instructor", default="instructor", help="the super user's name")
    ap.add_argument("--bootstrap", help="the shared cluster's host:port list")
    ap.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")


#: every command but the default one (provisioning a roster), as ``--help`` lists them
COMMAND_HELP = {
    "remove": "remove learners: their quotas, ACLs, user, topics and consumer groups",
    "cluster": "run an authenticated Kafka cluster on this machine until Ctrl-C (the workshop cluster)",
    "broker": "kill|stop|restart|pause|resume|status a broker of that cluster, from another terminal",
}


def _apply_parser() -> argparse.ArgumentParser:
    commands = "\n".join(f"  python -m course_lib.workshop {name} ...  {what}" for name, what in COMMAND_HELP.items())
    ap = argparse.ArgumentParser(
        prog="python -m course_lib.workshop",
        usage="%(prog)s ROSTER [options]  |  %(prog)s {" + ",".join(COMMAND_HELP) + "} ...",
        description=__doc__.split("\n\n")[0] + " Without a command: provision every learner of ROSTER.",
        epilog=f"other commands (each has its own --help):\n{commands}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("roster", help="text file, one learner per line (optionally: name key=value ...)")
    _common(ap)
    ap.add_argument(
        "--producer-byte-rate", type=int, default=Quota.producer_byte_rate, help="bytes/s (default: %(default)s)"
    )
    ap.add_argument(
        "--consumer-byte-rate", type=int, default=Quota.consumer_byte_rate, help="bytes/s (default: %(default)s)"
    )
    ap.add_argument(
        "--request-percentage",
        type=int,
        default=Quota.request_percentage,
        help="%% of a broker thread (default: %(default)s)",
    )
    ap.add_argument("--out", default="workshop-connections", help="where <name>.env files go")
    ap.add_argument("--spark-remote", help="sc://host:15002 written into every connection file")
    return ap


def _remove_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m course_lib.workshop remove", description=COMMAND_HELP["remove"])
    ap.add_argument("names", nargs="+", help="learner names to remove")
    _common(ap)
    ap.add_argument("--out", help="the connection files' folder: their <name>.env is deleted too")
    return ap


def _admin(args):
    """The instructor's admin client on an authorized cluster, or a CommandError saying why not."""
    password = os.environ.get(PASSWORD_ENV)
    if not args.bootstrap or not password:
        raise CommandError(
            f"applying needs --bootstrap HOST:PORT and the instructor's password in {PASSWORD_ENV} (or pass --dry-run)"
        )

    from course_lib.client_adapters.access import LoginFailed, explained
    from course_lib.real.admin_client import AdminClient
    from course_lib.real.security import client_kwargs
    from course_lib.workshop.provision import check_authorizer

    try:
        with explained(args.instructor, "", bootstrap_servers=args.bootstrap):
            admin = AdminClient(
                bootstrap_servers=args.bootstrap,
                bootstrap_timeout_ms=15000,
                **client_kwargs(args.instructor, password),
            )
    except LoginFailed as e:
        raise CommandError(
            f"{e} (the instructor is --instructor {args.instructor!r}, password from {PASSWORD_ENV})"
        ) from None
    try:
        check_authorizer(admin)
    except Exception:
        admin.close()
        raise
    return admin


def apply(argv: list[str]) -> int:
    args = _apply_parser().parse_args(argv)
    learners = read_roster(args.roster, reserved=(args.instructor,))
    default = Quota(args.producer_byte_rate, args.consumer_byte_rate, args.request_percentage)
    print("\n".join(plan(learners, default)))
    if args.dry_run:
        return 0
    from course_lib.workshop.credentials import learner_passwords, write_connection_files
    from course_lib.workshop.provision import provision

    out = Path(args.out)
    passwords = learner_passwords(out, learners)
    admin = _admin(args)
    try:
        provision(admin, learners, passwords, default)
    finally:
        admin.close()
    for f in write_connection_files(out, args.bootstrap, learners, passwords, args.spark_remote):
        print(f"wrote {f}")
    return 0


def remove(argv: list[str]) -> int:
    args = _remove_parser().parse_args(argv)
    from course_lib.workshop.roster import parse_roster

    learners: list[Learner] = parse_roster("\n".join(args.names), "command line", reserved=(args.instructor,))
    from course_lib.workshop.provision import removal_plan, unprovision

    if args.dry_run:
        print("\n".join(removal_plan(learners)))
        return 0
    admin = _admin(args)
    try:
        for line in unprovision(admin, learners):
            print(line)
    finally:
        admin.close()
    for lr in learners:
        f = Path(args.out) / f"{lr.name}.env" if args.out else None
        if f is not None and f.exists():
            f.unlink()
            print(f"deleted {f}")
    return 0


def cluster(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m course_lib.workshop cluster", description=COMMAND_HELP["cluster"])
    ap.add_argument("--dir", required=True, help="where the cluster keeps its data, logs and control socket")
    ap.add_argument("--brokers", type=int, default=3)
    ap.add_argument("--instructor", default="instructor", help="the super user's name")
    ap.add_argument("--heap-mb", type=int, default=512)
    ap.add_argument(
        "--listen",
        default="127.0.0.1",
        metavar="HOST",
        help="address the client ports bind: 127.0.0.1 (default; a hub on this machine) or 0.0.0.0 (every interface)",
    )
    ap.add_argument(
        "--advertise",
        metavar="HOST",
        help="address the learners' clients connect to (this VM's name or IP as the hub sees it; default: --listen)",
    )
    ap.add_argument(
        "--kafka-version",
        metavar="VERSION",
        help="the Apache Kafka release the brokers run (default: $COURSE_KAFKA_VERSION, else the course's default)",
    )
    args = ap.parse_args(argv)
    if args.listen in ("0.0.0.0", "::") and not args.advertise:
        raise CommandError(
            f"--listen {args.listen} needs --advertise HOST: the name or address the hub reaches this machine by"
        )
    password = os.environ.get(PASSWORD_ENV)
    if not password:
        raise CommandError(f"set the instructor's password in {PASSWORD_ENV} first (the learners never see it)")
    import signal
    import threading

    from course_lib.real.cluster import LocalCluster
    from course_lib.real.security import ClusterAuth
    from course_lib.workshop.broker_control import ControlServer, write_state

    root = Path(args.dir).expanduser()
    auth = ClusterAuth(admin_user=args.instructor, admin_password=password)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    with LocalCluster(
        args.brokers,
        data_dir=root,
        wipe=True,
        auth=auth,
        heap_mb=args.heap_mb,
        listen_host=args.listen,
        advertised_host=args.advertise,
        kafka_version=args.kafka_version,
    ) as c:
        server = ControlServer(c, root)
        state = write_state(root, c)
        print(f"Kafka runs: --bootstrap {c.bootstrap_servers} (also in {state}); Ctrl-C stops it", flush=True)
        try:
            done.wait()
        except KeyboardInterrupt:
            pass
        finally:
            server.close()
    return 0


def broker(argv: list[str]) -> int:
    from course_lib.workshop.broker_control import ACTIONS, ControlError, request

    ap = argparse.ArgumentParser(prog="python -m course_lib.workshop broker", description=COMMAND_HELP["broker"])
    ap.add_argument("action", choices=ACTIONS)
    ap.add_argument("broker_id", nargs="?", type=int)
    ap.add_argument("--cluster-dir", required=True, help="the --dir of `python -m course_lib.workshop cluster`")
    args = ap.parse_args(argv)
    try:
        print(request(args.cluster_dir, args.action, args.broker_id))
    except ControlError as e:
        raise CommandError(str(e)) from None
    return 0


COMMANDS = {"remove": remove, "cluster": cluster, "broker": broker}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = COMMANDS.get(argv[0]) if argv else None
    try:
        return command(argv[1:]) if command else apply(argv)
    except (RosterError, CommandError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # the cluster refused part of the work: say what, not a traceback
        from course_lib.workshop.provision import ProvisionError

        if isinstance(e, ProvisionError):
            print(f"error: {e}", file=sys.stderr)
            return 1
        raise


if __name__ == "__main__":
    sys.exit(main())
