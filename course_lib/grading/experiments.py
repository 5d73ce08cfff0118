"""The experiments behind the exercises' predictions, importable from a notebook: a failed
prediction's "reproduce" line is a call to one of these (with the seed it failed on), and its
value is what the run measured.

>>> from course_lib.grading.experiments import lost_ack_log
>>> len(lost_ack_log(1, seed=1))  # one record, then a batch of one whose ACK is lost: retried, written twice
3
"""

from __future__ import annotations

from ..experiments.scenarios import run_scenario
from .lessons.ex01_replicated_log import paused_follower_state
from .lessons.ex03_retries_ordering_duplicates import lost_ack_log, smallest_in_flight_that_reorders
from .lessons.ex05_consumer_delivery_semantics import lossy_crash_points
from .lessons.ex05b_consumer_groups import consumer_group_twice, group_run_shown, restart_rebalances, slow_handler
from .lessons.ex05c_share_groups import (
    dead_letters_written,
    poison_deliveries,
    share_crash_twice,
    slow_handler_processings,
)
from .lessons.ex06_transactions import TX_PLAN, transaction_log
from .lessons.ex11_capstone import lossy_history

__all__ = [
    "TX_PLAN",
    "consumer_group_twice",
    "dead_letters_written",
    "group_run_shown",
    "lossy_crash_points",
    "lossy_history",
    "lost_ack_log",
    "paused_follower_state",
    "poison_deliveries",
    "restart_rebalances",
    "run_scenario",
    "share_crash_twice",
    "slow_handler",
    "slow_handler_processings",
    "smallest_in_flight_that_reorders",
    "transaction_log",
]
