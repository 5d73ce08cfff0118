"""The share group experiments moved to course_lib/share_group_experiments.py (notebook 09's
protocol matrix runs them too); the tests keep importing them by this name."""

from course_lib.share_group_experiments import *  # noqa: F403
