"""Jupyter widgets without a kernel: the demo pages' Python side (tools/demo_page.py).

A widget's Python half talks to its browser half through a *comm* (the ``comm`` package): in a
notebook the kernel carries the messages over the Jupyter protocol. A demo page has no kernel and
no JupyterLite: Python (Pyodide) and the widget manager (``@jupyter-widgets/html-manager``) run in
the same page, so :class:`BridgeComm` hands each message to a JavaScript function directly, and
:func:`receive` gives the browser's messages (a click, a changed value) to the widget, in the same
shape a kernel would. ``comm.create_comm`` is the documented place to plug a Comm class in.

:func:`run_cell` runs a demo's code cell as a notebook would and says what it displays: widgets
(by model id, for the manager to draw) or text. It imports neither IPython's shell nor a kernel.
The same code runs in CPython (tools/import_graph.py measures what a demo imports with it, and
tests/test_demo_page.py compares a seeded action's outcome in both).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from typing import Any

import comm
from comm.base_comm import BaseComm

#: where messages to the browser go: ``send(message_json, buffers)`` (the page sets it)
_send: Callable[[str, list], None] | None = None
#: messages sent before the page connected (CPython measurement: nobody listens)
sent: list[dict] = []


class BridgeComm(BaseComm):
    """A comm whose other end is a JavaScript function of the same page."""

    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys) -> None:
        message = {
            "msg_type": msg_type,
            "content": {"comm_id": self.comm_id, "data": data or {}, **keys},
            "metadata": metadata or {},
        }
        if _send is None:
            sent.append(message)
        else:
            _send(json.dumps(message), [bytes(b) for b in buffers or []])


def connect(send: Callable[[str, list], None] | None) -> None:
    """Route every widget's messages to ``send`` (None: keep them in :data:`sent`)."""
    global _send
    _send = send
    comm.create_comm = BridgeComm  # ipywidgets opens its comms through this


def receive(comm_id: str, message_json: str, buffers: Any = ()) -> None:
    """A message from the browser's half of widget ``comm_id`` (its ``data``, as JSON)."""
    data = json.loads(message_json)
    target = comm.get_comm_manager().comms.get(comm_id)
    if target is None:
        return  # a widget closed on this side meanwhile: nothing listens
    target.handle_msg({"content": {"comm_id": comm_id, "data": data}, "buffers": [memoryview(b) for b in buffers]})


def _widget_of(value: Any) -> Any:
    """What a notebook would draw for ``value``: its widget (the course's apps keep theirs in
    ``.widget``; a widget is its own), or None."""
    from ipywidgets import Widget

    if isinstance(value, Widget):
        return value
    shown: list = []
    display_method = getattr(type(value), "_ipython_display_", None)
    if display_method is not None:
        # the course's objects display themselves with IPython.display.display(widget): take the
        # widget they hand over instead of asking a shell to draw it
        import IPython.display

        original = IPython.display.display
        IPython.display.display = lambda *objects, **_: shown.extend(objects)
        try:
            display_method(value)
        finally:
            IPython.display.display = original
    return shown[0] if shown and isinstance(shown[0], Widget) else None


def run_cell(source: str, namespace: dict) -> str:
    """Run a code cell in ``namespace``; returns (JSON) what it displays: ``[{"widget": model_id}]``,
    ``[{"text": repr}]`` or ``[]``, as its last expression would show in a notebook."""
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    assert last is None or isinstance(last, ast.Expr)  # for the type checker: popped only if so
    exec(compile(tree, "<demo cell>", "exec"), namespace)
    if last is None:
        return "[]"
    value = eval(compile(ast.Expression(last.value), "<demo cell>", "eval"), namespace)
    if value is None:
        return "[]"
    widget = _widget_of(value)
    if widget is not None:
        return json.dumps([{"widget": widget.model_id}])
    return json.dumps([{"text": repr(value)}])


#: the members :func:`unpack` still has to write, in order (set by its first call)
_to_unpack: list[str] | None = None


def unpack_order(names: list[str], imported) -> list[str]:
    """Which of a demo zip's ``names`` to write to disk, and in what order: data files first (a
    click may read one: kafka-python's schemas...), then sources (for tracebacks); not the bytecode
    of a module already imported (the memory snapshot holds it: nothing will read the file).

    >>> unpack_order(["a/__init__.py", "a/__pycache__/__init__.cpython-313.pyc", "a/s.json",
    ...               "b/__pycache__/c.cpython-313.pyc", "__pycache__/d.cpython-313.pyc", "a/"], imported={"a", "d"})
    ['a/s.json', 'a/__init__.py', 'b/__pycache__/c.cpython-313.pyc']
    """

    def module(pyc: str) -> str:
        folder, _, name = ("/" + pyc).removesuffix(".pyc").rpartition("/__pycache__/")
        package, stem = folder.strip("/").replace("/", "."), name.split(".")[0]
        return package if stem == "__init__" else f"{package}.{stem}".lstrip(".")

    files = [n for n in names if not n.endswith("/")]
    data = [n for n in files if not n.endswith((".py", ".pyc"))]
    code = [n for n in files if n.endswith(".py") or (n.endswith(".pyc") and module(n) not in imported)]
    return data + code


def unpack(archive: str, target: str, count: int) -> bool:
    """Write the next ``count`` members of zip ``archive`` (:func:`unpack_order`) under ``target``;
    True once all are written. The page calls it between events, so a click never waits long."""
    global _to_unpack
    import sys
    import zipfile

    with zipfile.ZipFile(archive) as z:
        if _to_unpack is None:
            _to_unpack = unpack_order(z.namelist(), set(sys.modules))
        for name in _to_unpack[:count]:
            z.extract(name, target)
        del _to_unpack[:count]
    return not _to_unpack
