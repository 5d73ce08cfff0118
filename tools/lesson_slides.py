"""Instructor slides for each lesson, generated from the lesson itself, with the facilitator notes
beside them (reveal.js's speaker view: press S). Works offline.

    python -m tools.lesson_slides                     # every lesson with notes -> artifacts/slides/
    python -m tools.lesson_slides notebooks/01_replicated_log.ipynb --out /tmp/slides

(``make slides``.) Each ``## `` heading of a lesson starts a slide; the cells under it follow on the
same slide (it scrolls when long). The notes come from two places, both written for the instructor:

- the lesson's paragraph of the instructor guide's facilitator notes (workshop/INSTRUCTOR_GUIDE.md,
  section 4), on the title slide;
- ``workshop/notes/NN.md``: one ``## heading`` section per slide, the heading as the lesson writes
  it; text before the first section goes on the title slide too. A section whose heading is not a
  slide of the lesson is an error (a renamed heading would silently lose its notes).

Offline: nbconvert's reveal template loads reveal.js, require.js, jQuery, MathJax and Mermaid from
CDNs. The course's template (share/jupyter/nbconvert/templates/course_slides) loads only reveal.js
and require.js, from a folder beside the slides; they come from their npm packages, installed once
into the course cache (as tools/pyodide_local does for Pyodide). Generated slides are not committed.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

from course_lib.cache import npm_packages

ROOT = Path(__file__).resolve().parents[1]
NOTES_DIR = ROOT / "workshop" / "notes"
GUIDE = ROOT / "workshop" / "INSTRUCTOR_GUIDE.md"
TEMPLATES = ROOT / "share" / "jupyter" / "nbconvert" / "templates"
OUT = ROOT / "artifacts" / "slides"
# reveal.js 4.x: the layout (dist/, plugin/notes/) nbconvert's reveal template is written for
REVEAL_VERSION, REQUIREJS_VERSION = "4.6.0", "2.3.8"
ASSETS = "reveal.js"  # the folder beside the slides


class NotesError(ValueError):
    """The notes do not fit the lesson (a section for a heading the lesson does not have)."""


#: the cache entry of the slides' npm packages (tools/prepare.py prepares it before the tests)
NPM_ENTRY = f"npm-reveal-{REVEAL_VERSION}-requirejs-{REQUIREJS_VERSION}"


def npm_assets() -> Path:
    """reveal.js and require.js from npm, installed together (one ``npm install``) into the course
    cache on first use; returns their ``node_modules``."""
    return npm_packages(NPM_ENTRY, f"reveal.js@{REVEAL_VERSION}", f"requirejs@{REQUIREJS_VERSION}")


def _key(heading: str) -> str:
    return re.sub(r"\s+", " ", heading.strip().lstrip("#").replace("`", "")).strip().lower()


def read_notes(text: str) -> tuple[str, dict[str, str]]:
    """(title-slide notes, {heading key: notes}) from a notes file.

    >>> read_notes("# 01\\nOpen with a question.\\n## A follower stops\\nAsk what the HW does.\\n")
    ('Open with a question.', {'a follower stops': 'Ask what the HW does.'})
    """
    title: list[str] = []
    sections: dict[str, list[str]] = {}
    current = title
    for line in text.splitlines():
        if line.startswith("## "):
            current = sections.setdefault(_key(line), [])
        elif not line.startswith("# "):
            current.append(line)
    return "\n".join(title).strip(), {k: "\n".join(v).strip() for k, v in sections.items()}


def guide_notes(lesson_number: str, guide: str | None = None) -> str:
    """The lesson's paragraph of the guide's facilitator notes ("**01 the replicated log.** ...")."""
    text = guide if guide is not None else GUIDE.read_text(encoding="utf-8")
    section = text.split("## 4. Facilitator notes", 1)[-1].split("\n## ", 1)[0]
    for paragraph in section.split("\n\n"):
        if paragraph.startswith(f"**{lesson_number} "):
            return paragraph.strip()
    return ""


def _headings(cell) -> list[str]:
    """The cell's ``#``/``##`` headings, wherever they are (a cell may open with a sentence, or hold
    two sections: it is one slide, and each heading's notes go beside it)."""
    if cell.cell_type != "markdown":
        return []
    return [line for line in cell.source.split("\n") if line.startswith(("# ", "## "))]


def _heading(cell) -> str | None:
    return next(iter(_headings(cell)), None)


def slide_notebook(lesson, notes_text: str, number: str, guide: str | None = None):
    """The lesson as a slide deck: a slide per heading, the notes as reveal.js speaker notes."""
    import nbformat

    title_notes, sections = read_notes(notes_text)
    headings = {_key(h): i for i, c in enumerate(lesson.cells) for h in _headings(c)}
    unknown = sorted(set(sections) - set(headings))
    if unknown:
        raise NotesError(
            f"notes for lesson {number} name headings the lesson does not have: {unknown}; "
            f"its headings are: {sorted(headings)}"
        )
    deck = nbformat.v4.new_notebook(metadata={**lesson.metadata, "title": f"{_heading(lesson.cells[0]) or number}"})
    at_title = "\n\n".join(t for t in (guide_notes(number, guide), title_notes) if t)
    notes_after: dict[int, str] = {}
    for key, text in sections.items():  # in the notes' order; two sections of one cell: both
        if text:
            i = headings[key]
            notes_after[i] = f"{notes_after[i]}\n\n{text}" if i in notes_after else text
    if at_title:
        notes_after[0] = at_title + ("\n\n" + notes_after[0] if 0 in notes_after else "")
    for i, cell in enumerate(lesson.cells):
        if cell.cell_type == "code" and cell.source.lstrip().startswith("import warnings"):
            continue  # the setup cell is no slide
        copy = nbformat.from_dict({**cell, "metadata": dict(cell.metadata)})
        if copy.cell_type == "code":  # the code as the room will run it: no outputs, no test markers
            copy.outputs, copy.execution_count = [], None
            copy.source = "\n".join(line for line in copy.source.split("\n") if "NBVAL_" not in line)
        copy.metadata["slideshow"] = {"slide_type": "slide" if i == 0 or _heading(cell) else "-"}
        deck.cells.append(copy)
        if i in notes_after:
            note = nbformat.v4.new_markdown_cell(notes_after[i])
            note.metadata["slideshow"] = {"slide_type": "notes"}
            deck.cells.append(note)
    return deck


def build(lesson_path: Path, out: Path = OUT, notes_dir: Path = NOTES_DIR) -> Path:
    """Write ``out/NN_name.slides.html`` (and the reveal.js folder beside it); returns its path."""
    import nbformat
    from nbconvert import SlidesExporter

    number = lesson_path.name.split("_", 1)[0]
    notes = notes_dir / f"{number}.md"
    if not notes.exists():
        raise FileNotFoundError(f"no facilitator notes for lesson {number}: write {notes}")
    deck = slide_notebook(nbformat.read(lesson_path, as_version=4), notes.read_text(encoding="utf-8"), number)
    modules = npm_assets()
    out.mkdir(parents=True, exist_ok=True)
    assets = out / ASSETS
    if not (assets / "require.js").exists():
        shutil.copytree(modules / "reveal.js" / "dist", assets / "dist", dirs_exist_ok=True)
        shutil.copytree(modules / "reveal.js" / "plugin" / "notes", assets / "plugin" / "notes", dirs_exist_ok=True)
        shutil.copy(modules / "requirejs" / "require.js", assets / "require.js")
    exporter = SlidesExporter(
        template_name="course_slides",
        extra_template_basedirs=[str(TEMPLATES)],
        reveal_url_prefix=ASSETS,
        require_js_url=f"{ASSETS}/require.js",
        reveal_scroll=True,
    )
    body, _ = exporter.from_notebook_node(deck, resources={"metadata": {"name": lesson_path.stem}})
    target = out / f"{lesson_path.stem}.slides.html"
    target.write_text(body, encoding="utf-8")
    return target


def lessons_with_notes(notes_dir: Path = NOTES_DIR) -> list[Path]:
    numbers = {p.stem for p in notes_dir.glob("*.md")}
    return sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if p.name.split("_", 1)[0] in numbers)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.lesson_slides", description=__doc__.split("\n\n")[0])
    ap.add_argument("lessons", nargs="*", type=Path, help="lesson notebooks (default: every lesson with notes)")
    ap.add_argument("--out", type=Path, default=OUT, help=f"where the slides go (default: {OUT.relative_to(ROOT)})")
    args = ap.parse_args(argv)
    try:
        for lesson in args.lessons or lessons_with_notes():
            print(f"wrote {build(lesson, args.out)}")
    except (NotesError, FileNotFoundError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print("open one in a browser; press S for the speaker view with the facilitator notes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
