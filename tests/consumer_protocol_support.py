"""The KIP-848 experiments moved to course_lib/experiments/consumer_protocol_experiments.py (notebook 09's
protocol matrix runs them too); the tests keep importing them by this name, the helpers that
other support modules build on (tests/static_member_support.py) included."""

from course_lib.experiments.consumer_protocol_experiments import *  # noqa: F403
from course_lib.experiments.consumer_protocol_experiments import (  # noqa: F401 - re-exported for other support modules
    _join_then_split,
    _split_again,
    _trail,
    _until,
)
