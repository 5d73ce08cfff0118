"""Widget response times: how long each action of the delivery simulator takes, from the
click (or value change) until every view is updated. The budget is 100 ms per action.

Wall-clock time (``time.perf_counter``): a learner waits for the wall clock. Each action is
repeated on fresh apps; the table shows the median and the worst run.

Run: ``python -m bench widgets``.
"""

from __future__ import annotations

import statistics
import time

BUDGET_MS = 100.0


def _actions():
    """(name, prepare(app), act(app)) - prepare is not timed."""

    def nothing(app):
        pass

    def lagging(app):
        app.acks.value = "1"
        app.idempotence.value = False
        app.lagging_followers.value = True
        app.send_button.click()

    def sent(app):
        app.send_button.click()

    def sent_lost_ack(app):
        app.idempotence.value = False
        app.lose_ack_button.click()
        app.send_button.click()

    def crashed(app):
        app.crash_button.click()

    return [
        ("change acks (new run)", nothing, lambda app: setattr(app.acks, "value", "1")),
        ("toggle idempotence (new run)", nothing, lambda app: setattr(app.idempotence, "value", False)),
        ("change min.insync.replicas", nothing, lambda app: setattr(app.min_insync, "value", 3)),
        ("send 5 messages", nothing, lambda app: app.send_button.click()),
        ("crash leader (+ election)", sent, lambda app: app.crash_button.click()),
        ("lose next ACK", nothing, lambda app: app.lose_ack_button.click()),
        ("restart broker", crashed, lambda app: app.restart_button.click()),
        ("step 10 ms", nothing, lambda app: app.step_button.click()),
        ("run 1000 ms", sent, lambda app: app.run_button.click()),
        (
            "heal and check (after a crash, acks=1)",
            lambda app: (lagging(app), app.crash_button.click()),
            lambda app: app.check_button.click(),
        ),
        ("heal and check (after a lost ACK)", sent_lost_ack, lambda app: app.check_button.click()),
        ("new run", nothing, lambda app: app.reset_button.click()),
    ]


def measure(repeats: int = 15) -> list[tuple[str, float, float]]:
    from course_lib.viz import DeliverySimulator

    return [(name, *_time(DeliverySimulator, prepare, act, repeats)) for name, prepare, act in _actions()]


def _time(cls, prepare, act, repeats: int) -> tuple[float, float]:
    """Median and worst wall-clock ms of ``act`` on a fresh, prepared app, over ``repeats`` seeds."""
    times = []
    for seed in range(repeats):
        app = cls(seed=seed)
        prepare(app)
        start = time.perf_counter()
        act(app)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), max(times)


def measure_consumer_demos(repeats: int = 15) -> list[tuple[str, float, float]]:
    from course_lib.viz import ConsumerCrashDemo, TransactionsDemo

    cases = [
        ("consumer demo: crash consumer", ConsumerCrashDemo, lambda app: None, lambda app: app.crash_button.click()),
        ("consumer demo: run without a crash", ConsumerCrashDemo, lambda app: None, lambda app: app.run_button.click()),
        ("transactions demo: commit", TransactionsDemo, lambda app: None, lambda app: app.commit_button.click()),
        (
            "transactions demo: abort",
            TransactionsDemo,
            lambda app: app.commit_button.click(),
            lambda app: app.abort_button.click(),
        ),
        (
            "transactions demo: wait for the timeout",
            TransactionsDemo,
            lambda app: app.open_button.click(),
            lambda app: app.timeout_button.click(),
        ),
        ("transactions demo: start over", TransactionsDemo, lambda app: None, lambda app: app.reset_button.click()),
    ]
    return [(name, *_time(cls, prepare, act, repeats)) for name, cls, prepare, act in cases]


def main(quick: bool = False) -> None:
    rows = measure(5 if quick else 15) + measure_consumer_demos(5 if quick else 15)
    print(f"\nDemo widgets: response time per action (wall clock, budget {BUDGET_MS:g} ms)")
    print(f"{'action':<42} {'median ms':>10} {'worst ms':>10}  within budget")
    for name, median, worst in rows:
        print(f"{name:<42} {median:>10.1f} {worst:>10.1f}  {'yes' if worst < BUDGET_MS else 'NO'}")


if __name__ == "__main__":
    main()
