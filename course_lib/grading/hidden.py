"""Seeds the instructor's grader uses instead of the public ones (see exercises.py).

The grader imports this module only in its own process and in the evaluation process it starts
for implementations; the process that runs a submitted notebook refuses to import it.
"""
HIDDEN_SEEDS = {
    "ex02_q2": tuple(range(1000, 1100)),
    "ex03_q2": tuple(range(2000, 2100)),
    "ex05_q2": tuple(range(3000, 3008)),
    "ex06_q3": tuple(range(3500, 3506)),
    "ex07_q1": tuple(range(4000, 4008)),
    "ex09_q1": tuple(range(5000, 5030)),
    "ex10_q1": tuple(range(6000, 6008)),
}


def seeds_for(exercise) -> tuple:
    return HIDDEN_SEEDS.get(exercise.id, exercise.public_seeds)
