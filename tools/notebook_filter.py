"""A git "clean" filter for the course's notebooks: what git stores of a notebook is its cells'
sources, never a learner's outputs.

A learner runs a lesson; JupyterLab autosaves it with outputs, execution counts and the kernel's
``language_info``. Without this filter the working copy is "modified" and ``git pull`` of a course
update refuses to overwrite it. With it, git sees the saved file through :func:`clean` - outputs
and execution counts gone, the notebook-level metadata as the index has it - so a notebook that
was only *run* is unchanged for git, and a pull updates it. Edits to cell sources stay edits.

``make lab`` installs it (``make git-filter``); .gitattributes names the notebooks it applies to::

    git config filter.course-notebook.clean "python3 tools/notebook_filter.py %f"
    git config filter.course-notebook.smudge cat

One step is still needed before a pull: git trusts a file's size before its content, so a notebook
whose size changed (outputs) looks modified to ``git status`` and ``git pull`` until it is staged
again. ``python3 tools/notebook_filter.py --refresh`` stages exactly the notebooks that were only
run (their filtered content is the committed one); ``make update`` does that, then ``git pull``.

Standard library only: git runs it with whatever ``python3`` is on the PATH.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

#: cell metadata a run (not the author) writes: timings, scroll and collapse state
RUN_METADATA = ("execution", "scrolled", "collapsed", "trusted", "ExecuteTime")


def _indexed_metadata(path: str | None) -> dict | None:
    """The notebook-level metadata of ``path`` as the index holds it (None: not in the index)."""
    if not path:
        return None
    try:
        blob = subprocess.run(["git", "show", f":{path}"], capture_output=True, check=True, timeout=30).stdout
        return json.loads(blob).get("metadata")
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def clean(text: str, path: str | None = None) -> str:
    """The notebook ``text`` without outputs, execution counts or run metadata, in nbformat's own
    layout (one-space indent, sorted keys, a final newline: what the committed lessons use).

    >>> saved = json.dumps({"cells": [{"cell_type": "code", "execution_count": 3, "id": "a",
    ...     "metadata": {"execution": {"t": 1}, "tags": ["x"]}, "outputs": [{"text": "5"}], "source": "1"}],
    ...     "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    >>> cell = json.loads(clean(saved))["cells"][0]
    >>> cell["outputs"], cell["execution_count"], cell["metadata"]
    ([], None, {'tags': ['x']})
    """
    nb = json.loads(text)
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        for key in RUN_METADATA:
            cell.get("metadata", {}).pop(key, None)
    indexed = _indexed_metadata(path)
    if indexed is not None:  # the kernel rewrites language_info on every run: keep the committed one
        nb["metadata"] = indexed
    return json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


FOLDERS = ("notebooks", "exercises", "workshop")


def installed(where: Path | str = ".") -> bool:
    """Whether this checkout sends notebooks through the filter (``make lab`` / ``make git-filter``)."""
    try:
        out = subprocess.run(
            ["git", "config", "--get", "filter.course-notebook.clean"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and "notebook_filter.py" in out.stdout


def as_committed(path: Path) -> str:
    """A notebook as git would store it: through the filter when this checkout has it installed
    (a learner's saved outputs are then no fault of the notebook: ``make test`` may check this
    view), else the file as it is."""
    text = Path(path).read_text(encoding="utf-8")
    root = Path(path).resolve().parent
    return clean(text) if installed(root) else text


def _git_names(*args: str) -> set[str]:
    out = subprocess.run(["git", *args], capture_output=True, text=True, check=True, timeout=120).stdout
    return {line for line in out.splitlines() if line.endswith(".ipynb")}


def refresh(folders=FOLDERS) -> list[str]:
    """Stage the notebooks that were only run: modified for ``git status`` (their size changed)
    but not for ``git diff`` (through the filter, the same content). Edited ones are left alone."""
    looks_modified = _git_names("diff-files", "--name-only", "--", *folders)  # stat only
    edited = _git_names("diff", "--name-only", "--", *folders)  # content, through the filter
    only_run = sorted(looks_modified - edited)
    if only_run:
        subprocess.run(["git", "add", "--", *only_run], check=True, timeout=120)
    return only_run


def main(argv: list[str]) -> int:
    if argv[1:] == ["--refresh"]:
        for name in refresh():
            print(f"only run, not edited: {name}")
        return 0
    text = sys.stdin.read()
    try:
        sys.stdout.write(clean(text, argv[1] if len(argv) > 1 else None))
    except ValueError:  # not JSON (a conflict, a half-written file): store it as it is
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
