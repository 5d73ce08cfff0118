"""Answers cross the process boundary as data: JSON in, JSON out. Nothing the learner's notebook
defines (objects, classes, functions) is unpickled in the grader - functions travel as source
text and run only in a separate, time-limited evaluation process."""

from __future__ import annotations

import ast
import re

from .framework import MISSING


class Opaque:
    """An answer of a type that does not travel as data (a DataFrame, a generator, ...)."""

    def __init__(self, type_name: str, text: str):
        self.type_name, self.text = type_name, text

    def __repr__(self):
        return self.text


def encode(value, depth: int = 0):
    if value is MISSING:
        return {"missing": True}
    if value is Ellipsis:
        return {"ellipsis": True}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"json": value}
    if depth < 5 and isinstance(value, (list, tuple)):
        return {"list": [encode(v, depth + 1) for v in value]}
    if depth < 5 and isinstance(value, (set, frozenset)):
        return {"set": [encode(v, depth + 1) for v in value]}
    if depth < 5 and isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"dict": {k: encode(v, depth + 1) for k, v in value.items()}}
    try:
        text = repr(value)[:200]
    except Exception:
        text = "<unprintable>"
    return {"opaque": type(value).__name__, "repr": text}


def decode(data):
    if "missing" in data:
        return MISSING
    if "ellipsis" in data:
        return Ellipsis
    if "json" in data:
        return data["json"]
    if "list" in data:
        return [decode(v) for v in data["list"]]
    if "set" in data:
        items = [decode(v) for v in data["set"]]
        try:
            return set(items)
        except TypeError:
            return items
    if "dict" in data:
        return {k: decode(v) for k, v in data["dict"].items()}
    return Opaque(data.get("opaque", "object"), data.get("repr", ""))


def definitions(cells: list[str], names: tuple) -> str | None:
    """The source the evaluation process runs for an "implement" exercise: every top-level import,
    function and class definition, and literal constant of the notebook, in order (later
    definitions win, as in the kernel). None when one of ``names`` is never defined."""
    chunks, defined = [], set()
    for source in cells:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            keep = isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef))
            if isinstance(node, ast.Assign):
                try:
                    ast.literal_eval(node.value)
                    keep = True
                except ValueError:
                    pass
            if keep:
                chunks.append(
                    ast.get_source_segment(source, node, padded=True)
                    if not isinstance(node, (ast.FunctionDef, ast.ClassDef))
                    else _with_decorators(source, node)
                )
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                defined.add(node.name)
    if not set(names) <= defined:
        return None
    return "\n\n".join(c for c in chunks if c)


def _with_decorators(source: str, node) -> str:
    lines = source.split("\n")
    start = min([d.lineno for d in node.decorator_list] + [node.lineno]) - 1
    return "\n".join(lines[start : node.end_lineno])


def _python(source: str) -> str:
    """A notebook cell as Python (IPython magics turned into calls), as the kernel runs it."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return TransformerManager().transform_cell(source)
    except ImportError:
        return source


def syntax_error(cells: list[str], names: tuple) -> str | None:
    """Why an answer is missing when the last cell that sets one of ``names`` cannot even be
    compiled: that cell never ran, so "not attempted yet" would be wrong. None otherwise.

    >>> print(syntax_error(['ex05_q1 = {\\n    "a": 1}\\n      y = 2'], ("ex05_q1",)))
    the cell that sets ex05_q1 has a syntax error, so it never ran: IndentationError: unexpected indent (line 3: y = 2). Fix that line and run the cell again.
    >>> syntax_error(["ex05_q1 = ..."], ("ex05_q1",)) is None
    True
    """
    sets = re.compile(r"^\s*(?:def\s+|class\s+)?(?:%s)\b\s*[=(:]" % "|".join(map(re.escape, names)), re.M)
    for source in reversed(cells):
        if not isinstance(source, str) or not sets.search(source):
            continue
        try:
            compile(_python(source), "<answer cell>", "exec")
        except SyntaxError as exc:
            where = f"line {exc.lineno}: {(exc.text or '').strip()}" if exc.lineno else "somewhere in the cell"
            return (
                f"the cell that sets {', '.join(names)} has a syntax error, so it never ran: "
                f"{type(exc).__name__}: {exc.msg} ({where}). Fix that line and run the cell again."
            )
        return None
    return None
