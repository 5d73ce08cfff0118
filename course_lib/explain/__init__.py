"""What a lesson says about a measurement, made from the measurement: one module per lesson
(``course_lib.explain.lesson02`` for notebooks/02_acks_and_durability, ``lesson05b`` for 05b ...).

The contract (the lessons' side is checked by tests/test_prediction_sources.py):

- Each function takes the result object it explains (a scenario run, a cluster, a dict of rates:
  whatever the experiment cell produced) and returns markdown built from the values in it, so
  every number it states is true by construction. Each has a doctest that runs it on a seeded run.
- A lesson hands that text to its prediction's reveal, shown only after *lock in*:
  ``p.reveal(actual, explanation=lesson02.survivors(r1))`` (or a callable returning the text).
  A measured statement is never a literal in a notebook, markdown or code: a learner reads the
  source before locking in.
- Text that is not a measurement (what to look for, why Kafka works this way) stays in the
  lesson's markdown; the explanation may repeat the why next to the numbers.

Deliberately no registry here: a lesson imports its own module, and adding a module touches no
other file.
"""
