"""Answers cross the process boundary as data: JSON in, JSON out. Nothing the learner's notebook
defines (objects, classes, functions) is unpickled in the grader - functions travel as source
text and run only in a separate, time-limited evaluation process."""

from __future__ import annotations

import ast

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
