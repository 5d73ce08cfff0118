"""What a graded exercise is and how an answer to one is graded: answer types, the
:class:`Exercise` record, the :func:`exercise` decorator a lesson module uses, :func:`grade`, and
:func:`predicted` for predictions. The exercises themselves live in one module per lesson under
:mod:`course_lib.grading.lessons`, collected by :mod:`course_lib.grading.registry`.

Kinds: ``predict`` (a number or set the learner works out *before* running anything, about a
configuration no notebook prints - :attr:`Exercise.copied` is the printed answer a copier would
give, and tests/test_grading_predict.py checks that it fails), ``choose`` (pick a configuration
or option; graded over many seeded fault schedules, so guessing fails), ``read`` (read a run's
history and explain it), ``implement`` (a function run by a crash harness and judged by the
checker). Every check *runs* something (the simulator, the real cluster, Spark), never compares
with a stored solution string.

Each check takes ``seeds``: the learner's ``check()`` uses :attr:`Exercise.public_seeds`; the
instructor's grader uses other seeds kept in :mod:`course_lib.grading.hidden`, so code tuned to
the public seeds does not pass by luck.
"""

from __future__ import annotations

import warnings
from types import ModuleType
from dataclasses import dataclass, field
from typing import Callable

from .report import ERROR, FAILED, NOT_ATTEMPTED, PASSED, SKIPPED, WRONG_TYPE, Part, Report


class _Missing:
    def __repr__(self):
        return "<no answer>"


MISSING = _Missing()


# ---- answer types --------------------------------------------------------------------------------
def _stub_code(*args): ...


def is_placeholder(answer) -> bool:
    """An untouched answer: missing, None, ``...``, a dict still holding ``...``, or a function
    whose body is still only ``...`` / ``pass`` / a docstring."""
    if answer is MISSING or answer is None or answer is Ellipsis:
        return True
    if isinstance(answer, dict):
        return any(v is Ellipsis for v in answer.values()) or any(
            isinstance(v, dict) and is_placeholder(v) for v in answer.values()
        )
    code = getattr(answer, "__code__", None)
    return code is not None and code.co_code == _stub_code.__code__.co_code


def _describe(answer) -> str:
    text = repr(answer)
    return f"a {type(answer).__name__}: {text if len(text) < 60 else text[:57] + '...'}"


def expect_int(answer):
    if isinstance(answer, bool) or not isinstance(answer, int):
        return f"expects a whole number (int), such as 4; you gave {_describe(answer)}"


def expect_choice(*choices):
    def expect(answer):
        if not isinstance(answer, str):
            return f"expects one of the strings {', '.join(map(repr, choices))}; you gave {_describe(answer)}"
        if answer not in choices:
            return f"expects one of {', '.join(map(repr, choices))}; {answer!r} is not one of them"

    expect.__doc__ = f"one of {choices}"
    return expect


def expect_set_of(*choices):
    def expect(answer):
        if not isinstance(answer, (set, frozenset, list, tuple)) or not all(isinstance(a, str) for a in answer):
            return (
                f"expects a set of strings taken from {', '.join(map(repr, choices))}, such as "
                f"{{{choices[0]!r}}}; you gave {_describe(answer)}"
            )
        unknown = set(answer) - set(choices)
        if unknown:
            return f"{sorted(unknown)} not among the allowed values {', '.join(map(repr, choices))}"

    return expect


def expect_dict(*keys):
    def expect(answer):
        if not isinstance(answer, dict):
            return (
                f"expects a dict with the keys {', '.join(map(repr, keys))}; you gave {_describe(answer)}"
                if keys
                else f"expects a dict of KafkaProducer settings, such as {{'acks': 'all'}}; you gave "
                f"{_describe(answer)}"
            )
        missing = [k for k in keys if k not in answer]
        if missing:
            return f"the dict is missing the key(s) {', '.join(map(repr, missing))}"
        for k in keys:
            if not isinstance(answer[k], dict):
                return f"answer[{k!r}] should be a dict of settings; you gave {_describe(answer[k])}"

    return expect


def expect_function(n_args: int):
    def expect(answer):
        if not callable(answer):
            return f"expects a function taking {n_args} argument(s); you gave {_describe(answer)}"

    return expect


# ---- the exercise record -------------------------------------------------------------------------
@dataclass
class Exercise:
    id: str
    notebook: str
    kind: str
    question: str
    expect: Callable
    check: Callable  # (answer, seeds) -> list[Part]
    hint: str
    points: float = 1.0
    public_seeds: tuple = (0,)
    #: for "implement": the names the grader takes out of the notebook (functions defined there)
    functions: tuple = field(default_factory=tuple)
    #: for "predict": the answer a learner gets by copying what a notebook prints (a neighbouring
    #: configuration), and where it is printed; the check must reject it
    copied: Callable[[], object] | None = None
    copied_from: str = ""

    @property
    def is_implementation(self) -> bool:
        return bool(self.functions)


def exercise(**kw):
    """Make the decorated check function an exercise: ``@exercise(id=..., notebook=..., ...)``.
    The record is kept on the function; :func:`exercises_in` finds it in the lesson's module (no
    registry is filled as a side effect of importing, so nothing depends on import order)."""

    def register(fn):
        fn.exercise = Exercise(check=fn, **kw)
        return fn

    return register


def exercises_in(modules) -> dict[str, Exercise]:
    """The exercises defined in ``modules``, by id, in the order the modules and their
    definitions come. Two exercises with one id are an error, not a silent replacement."""
    found: dict[str, Exercise] = {}
    for module in modules:
        if not isinstance(module, ModuleType):
            raise TypeError(f"exercises_in expects modules, not {module!r}")
        for value in vars(module).values():
            ex = getattr(value, "exercise", None)
            if isinstance(ex, Exercise) and value.__module__ == module.__name__:
                if ex.id in found:
                    raise ValueError(
                        f"exercise id {ex.id!r} is defined twice ({found[ex.id].check.__module__} and "
                        f"{module.__name__}): give one of them a new id"
                    )
                found[ex.id] = ex
    return found


def grade(ex: Exercise, answer, seeds=None) -> Report:
    """Grade one answer: not attempted / wrong type / each check part. Never raises for bad
    answers: whatever the learner's code does becomes the report."""
    seeds = tuple(ex.public_seeds if seeds is None else seeds)
    answers = answer if ex.is_implementation else (answer,)
    if any(is_placeholder(a) for a in answers):
        names = ", ".join(ex.functions) if ex.is_implementation else f"`{ex.id}`"
        return Report(
            ex.id,
            NOT_ATTEMPTED,
            0,
            ex.points,
            f"not attempted yet: replace the `...` in {names} with your answer, then run check({ex.id!r}) again.",
        )
    for a in answers:
        problem = ex.expect(a)
        if problem:
            return Report(ex.id, WRONG_TYPE, 0, ex.points, f"{ex.id} {problem}.", ex.hint)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parts = ex.check(*answers, seeds=seeds)
    except NotImplementedError:
        return Report(
            ex.id, NOT_ATTEMPTED, 0, ex.points, "not attempted yet: your function still raises NotImplementedError."
        )
    except Exception as exc:  # the learner's code raised: report it, do not crash the notebook
        return Report(
            ex.id,
            ERROR,
            0,
            ex.points,
            f"your code raised {type(exc).__name__}: {exc}. Run it on its own to see the traceback.",
            ex.hint,
        )
    graded = [p for p in parts if not p.skipped]
    if graded and all(p.passed for p in graded):
        return Report(ex.id, PASSED, ex.points, ex.points, "", ex.hint, parts)
    if not graded:
        return Report(ex.id, SKIPPED, 0, ex.points, "nothing could be graded here (see below)", "", parts)
    return Report(ex.id, FAILED, 0, ex.points, "", ex.hint, parts)


# ---- predictions ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Experiment:
    """What a prediction measures, as the code a learner can run: ``call`` with ``{seed}`` in it,
    and the import it needs. The check measures by running this very code, so the "reproduce"
    line a failure prints gives the measured value, by construction.

    >>> e = Experiment("len(run_scenario('lost_ack_retry', seed={seed}).history) > 0", "from course_lib.experiments.scenarios import run_scenario")
    >>> e.code(3)
    "from course_lib.experiments.scenarios import run_scenario; len(run_scenario('lost_ack_retry', seed=3).history) > 0"
    >>> e.run(3)
    True
    """

    call: str
    imports: str
    #: an expression showing the run behind the number (its log, its table), shown after it
    evidence: str = ""

    def code(self, seed: int) -> str:
        """One line to paste into a cell: its value is the run's measurement (or, with
        ``evidence``: the measurement printed, then the run's evidence as the cell's value).

        >>> Experiment("len(log({seed}))", "from m import log", evidence="log({seed})").code(2)
        'from m import log; print(len(log(2))); log(2)'
        """
        if self.evidence:
            return f"{self.imports}; print({self.call.format(seed=seed)}); {self.evidence.format(seed=seed)}"
        return f"{self.imports}; {self.call.format(seed=seed)}"

    def run(self, seed: int):
        namespace: dict = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(self.imports, namespace)
            return eval(self.call.format(seed=seed), namespace)


def _equal(name: str, answer, expected, seed=None, unit="", rerun="") -> list[Part]:
    if answer == expected:
        return [Part(name, True, seed=seed)]
    # never "too high" / "too low": that would let a learner binary-search the number to predict
    detail = (
        f"your prediction {answer}{unit} is not what the run shows"
        if isinstance(answer, int)
        else (f"{answer!r} is not what the run shows")
    )
    after = (
        "; you have predicted now: run the reproduce line to see the run's measurement and its evidence"
        if rerun
        else ""
    )
    return [Part(name, False, detail + after, seed, rerun=rerun)]


class Measured(int):
    """What an experiment measured, with the run's evidence: equal to the number, and shown (a
    notebook cell's value, a "reproduce" line) as the number followed by the evidence.

    >>> m = Measured(6, "records processed twice", "worker_crash, seed 1: 8 held, 6 finished")
    >>> m == 6, m + 1
    (True, 7)
    >>> m
    6 records processed twice
    the run:
      worker_crash, seed 1: 8 held, 6 finished
    """

    evidence: str
    what: str

    def __new__(cls, value: int, what: str, evidence: str) -> "Measured":
        self = super().__new__(cls, value)
        self.what, self.evidence = what, evidence
        return self

    def __repr__(self) -> str:
        lines = "\n".join("  " + line for line in self.evidence.splitlines())
        return f"{int(self)} {self.what}\nthe run:\n{lines}"

    def __reduce__(self):  # pickled (the grader's worker processes) as the plain number
        return (int, (int(self),))


def predicted(name: str, answer, measure: Experiment | Callable[[int], object], seeds) -> list[Part]:
    """One part per seed: the prediction against what the simulator measures with that seed (the
    grader's hidden seeds included, so the answer must hold for any run, not one printed run).
    With an :class:`Experiment`, a failure's "reproduce" line is the experiment itself."""
    if isinstance(measure, Experiment):
        return [
            part
            for s in seeds
            for part in _equal(f"{name}, seed {s}", answer, measure.run(s), seed=s, rerun=measure.code(s))
        ]
    return [part for s in seeds for part in _equal(f"{name}, seed {s}", answer, measure(s), seed=s)]
