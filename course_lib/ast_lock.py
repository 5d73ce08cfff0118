"""One ``ast.parse`` at a time, on the CPython versions where two at once can fail.

CPython 3.11.0-3.11.7 and 3.12.0-3.12.1 count ``ast.parse``'s recursion depth in state that all
threads share (gh-106905; fixed in 3.11.8 and 3.12.2). When a garbage collection inside one parse
runs Python code (a finalizer, a gc callback) and another thread parses meanwhile, one of them
raises ``SystemError: AST constructor recursion depth mismatch``. Python 3.11 parses whenever it
formats a traceback (to underline the failing expression), so any thread that logs an exception
does - and the course runs kafka-python's clients, the wire cluster and the fidelity table's
wire column in threads of one process (pytest crashed this way once while the table ran).

:func:`install` (run when :mod:`course_lib` is imported) wraps ``ast.parse`` in a lock on those
versions only; the parse itself is unchanged.

>>> import ast
>>> ast.dump(ast.parse("x"))
"Module(body=[Expr(value=Name(id='x', ctx=Load()))], type_ignores=[])"
"""

from __future__ import annotations

import ast
import functools
import sys
import threading

#: the interpreter shares ast.parse's depth counter between threads
AFFECTED = (3, 11) <= sys.version_info[:3] < (3, 11, 8) or (3, 12) <= sys.version_info[:3] < (3, 12, 2)


def install() -> bool:
    """Make ``ast.parse`` take a process-wide lock on an affected interpreter; True if it did now."""
    if not AFFECTED or getattr(ast.parse, "course_lock", None) is not None:
        return False
    parse, lock = ast.parse, threading.RLock()  # reentrant: a gc callback in a parse may parse

    @functools.wraps(parse)
    def locked_parse(*args, **kwargs):
        with lock:
            return parse(*args, **kwargs)

    locked_parse.course_lock = lock  # type: ignore[attr-defined]
    ast.parse = locked_parse  # type: ignore[assignment]
    return True
