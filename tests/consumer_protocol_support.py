"""The KIP-848 experiments moved to course_lib/consumer_protocol_experiments.py (notebook 09's
protocol matrix runs them too); the tests keep importing them by this name."""

from course_lib.consumer_protocol_experiments import *  # noqa: F403
