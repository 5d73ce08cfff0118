"""One marked source per exercise set -> a learner version and an instructor version.

Markers (in code cells of ``exercises_src/NN_topic.ipynb``):

- ``answer = 42  # SOLUTION``: the learner sees ``answer = ...``;
- a block between ``# BEGIN SOLUTION`` and ``# END SOLUTION``: the learner sees ``...`` at the
  block's indentation (inside a function, the function is then "not attempted yet");
- markdown between ``<!-- BEGIN SOLUTION -->`` and ``<!-- END SOLUTION -->``: instructor only.

The instructor version keeps the solutions and drops the markers. Both have no outputs, so the
generated files change only when the source does (tests/test_grading.py regenerates them and
fails if the committed ones differ, as nbdev's CI does).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

# An author's tool: it runs in a checkout of the course (``make exercises`` runs it from the
# repository root), so the folders are relative to the working directory, not to this package.
SOURCE_DIR, LEARNER_DIR, INSTRUCTOR_DIR = Path("exercises_src"), Path("exercises"), Path("solutions")
# ``name = value  # SOLUTION`` or, inside a dict literal, ``"key": value,  # SOLUTION``
_INLINE = re.compile(r"^(?P<indent>\s*)(?P<target>[^=#:]+?[=:])\s*(?P<value>.+?)(?P<comma>,?)\s*# SOLUTION\s*$")
_MD_BLOCK = re.compile(r"<!-- BEGIN SOLUTION -->.*?<!-- END SOLUTION -->\n?", re.S)
_MD_MARKER = re.compile(r"<!-- (BEGIN|END) SOLUTION -->")


class MarkerError(ValueError):
    pass


def _code(source: str, learner: bool, where: str) -> str:
    out, in_block = [], None
    for line in source.split("\n"):
        stripped = line.strip()
        if stripped == "# BEGIN SOLUTION":
            if in_block is not None:
                raise MarkerError(f"{where}: nested # BEGIN SOLUTION")
            in_block = line[: len(line) - len(line.lstrip())]
            continue
        if stripped == "# END SOLUTION":
            if in_block is None:
                raise MarkerError(f"{where}: # END SOLUTION without # BEGIN SOLUTION")
            if learner:
                out.append(f"{in_block}...  # YOUR CODE HERE")
            in_block = None
            continue
        if in_block is not None:
            if not learner:
                out.append(line)
            continue
        m = _INLINE.match(line)
        if m:
            out.append(
                f"{m['indent']}{m['target']} ...{m['comma']}  # YOUR ANSWER HERE"
                if learner
                else f"{m['indent']}{m['target']} {m['value']}{m['comma']}"
            )
            continue
        out.append(line)
    if in_block is not None:
        raise MarkerError(f"{where}: # BEGIN SOLUTION without # END SOLUTION")
    return "\n".join(out)


def render(nb, learner: bool, name: str = "notebook"):
    """Return a new notebook: the learner's (``learner=True``) or the instructor's version."""
    new = nbformat.v4.new_notebook(
        metadata={
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        }
    )
    for i, cell in enumerate(nb.cells):
        where = f"{name}, cell {i}"
        if cell.cell_type == "code":
            new.cells.append(nbformat.v4.new_code_cell(_code(cell.source, learner, where)))
        elif cell.cell_type == "markdown":
            text = (
                _MD_BLOCK.sub("", cell.source)
                if learner
                else "\n".join(line for line in cell.source.split("\n") if not _MD_MARKER.fullmatch(line.strip()))
            )
            if learner and cell.source.strip() and not text.strip():
                continue  # an instructor-only note: no empty cell under the learner's check
            new.cells.append(nbformat.v4.new_markdown_cell(text))
        else:
            new.cells.append(nbformat.v4.new_raw_cell(cell.source))
    for i, cell in enumerate(new.cells):
        cell.id = f"cell-{i}"  # stable ids: regenerating gives identical files
    return new


def generate(
    source_dir: Path = SOURCE_DIR, learner_dir: Path = LEARNER_DIR, instructor_dir: Path = INSTRUCTOR_DIR
) -> list[Path]:
    """Regenerate every learner and instructor notebook; returns the files written."""
    if not Path(source_dir).is_dir():
        raise FileNotFoundError(
            f"{Path(source_dir).resolve()} is not a folder: run this from the root of a checkout of the course "
            "(`make exercises`), where exercises_src/ is"
        )
    written = []
    for src in sorted(Path(source_dir).glob("*.ipynb")):
        nb = nbformat.read(src, as_version=4)
        for learner, folder in ((True, Path(learner_dir)), (False, Path(instructor_dir))):
            folder.mkdir(parents=True, exist_ok=True)
            target = folder / src.name
            target.write_text(nbformat.writes(render(nb, learner, src.name)) + "\n")
            written.append(target)
    return written
