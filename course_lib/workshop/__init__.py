"""Instructor tools for a workshop on one shared, authenticated Kafka cluster.

:mod:`course_lib.workshop.roster` reads the roster and says what each learner is granted.
"""
