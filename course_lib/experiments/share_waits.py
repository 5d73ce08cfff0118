"""When a crashed share-group worker's records come back, in the classes a lesson can state: "at
once" (its connection closed), "after about the lock duration" (its machine is gone, so nothing
tells the broker until the lock runs out), or "never".

The classes are the experiment's result, not the lesson's wording: the share-group experiments on
Kafka (:mod:`course_lib.experiments.on_kafka.share_groups`) compare them with the simulator's, and
lesson 05c (:mod:`course_lib.explain.lesson05c`) asks and reveals them.
"""

from __future__ import annotations


def crash_wait_answer(result) -> str:
    """When the other worker got the crashed worker's records, as one of the lesson's choices.

    >>> class R:
    ...     numbers = {"redelivery_after_crash_ms": 4_650}
    ...     settings = {"lock_ms": 5_000}
    >>> crash_wait_answer(R())
    'after about the lock duration'
    """
    after, lock = result.numbers["redelivery_after_crash_ms"], result.settings["lock_ms"]
    if after is None:
        return "never: they are lost"
    # the two answers are ~0 and ~lock minus the time the records were held before the crash: half
    # the lock sits between them, with room both ways (at 0.2 of a 10 s lock, "at once" - a closed
    # connection, a fetch, a poll answered over the Java driver - had 2 s on a loaded machine)
    if after < 0.5 * lock:
        return "at once"
    return "after about the lock duration"


def real_crash_answer(real_crash: dict | None, sim_crash) -> str:
    """When Kafka's other worker got the crashed worker's records, as one of the lesson's choices
    (the simulator's answer while Kafka did not run: ``real_crash`` None).

    >>> class Sim:
    ...     numbers, settings = {"redelivery_after_crash_ms": 4655}, {"lock_ms": 5_000}
    >>> real_crash_answer({"redelivery_after_crash_ms": 180}, Sim())
    'at once'
    >>> real_crash_answer(None, Sim())
    'after about the lock duration'
    """
    if real_crash is None:
        return crash_wait_answer(sim_crash)

    class Run:
        numbers, settings = real_crash, sim_crash.settings

    return crash_wait_answer(Run())
