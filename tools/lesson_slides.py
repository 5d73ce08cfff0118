"""Instructor slides for each lesson, designed as slides and generated from the lesson's teaching
kit (tools/teaching_kit.py: the lesson, its run, its notes). Works offline.

    python -m tools.lesson_slides                     # every lesson of the kit -> artifacts/slides/
    python -m tools.lesson_slides notebooks/01_replicated_log.ipynb --out /tmp/slides

(``make slides``.) The lesson is run once (as ``tools/notebook_outputs.py --execute`` runs it) and
the deck is made of:

- a title slide: the lesson's title and learning goals;
- per ``##`` section, a slide with its heading and opening paragraph;
- per prediction, a **question slide** (the question and its lock-in choices) and a **result
  slide** (what the run printed or drew for it: its figure, or its table as text), with the
  answer, the run's explanation and the section's talking points in the speaker notes;
- the summary, a few bullets per slide.

No code is shown: a slide shows what the room must think about, and what the run measured. Every
slide fits reveal.js's 1280x720 canvas (long outputs are shortened: the lesson has the rest;
tests/workshop/test_slides_browser.py checks it in Chromium). Press S for the speaker view.

Offline: reveal.js (its dist/ and its notes plugin) comes from its npm package, installed once into
the course cache and copied beside the slides; figures are embedded. Generated slides are not
committed.
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from course_lib.cache import npm_packages

ROOT = Path(__file__).resolve().parents[1]
NOTES_DIR = ROOT / "workshop" / "notes"
OUT = ROOT / "artifacts" / "slides"
# reveal.js 4.x: the layout (dist/, plugin/notes/) these slides are written for
REVEAL_VERSION, REQUIREJS_VERSION = "4.6.0", "2.3.8"
ASSETS = "reveal.js"  # the folder beside the slides
#: reveal.js's canvas: every slide is laid out at this size, then scaled to the screen
WIDTH, HEIGHT = 1280, 720
#: a result slide's text: at most this many (wrapped) lines of this many characters
MAX_LINES, LINE_CHARS = 18, 118
#: summary bullets per slide
BULLETS_PER_SLIDE = 3


#: the cache entry of the slides' npm packages (tools/prepare.py prepares it before the tests)
NPM_ENTRY = f"npm-reveal-{REVEAL_VERSION}-requirejs-{REQUIREJS_VERSION}"


def npm_assets() -> Path:
    """reveal.js and require.js from npm, installed together (one ``npm install``) into the course
    cache on first use; returns their ``node_modules``."""
    return npm_packages(NPM_ENTRY, f"reveal.js@{REVEAL_VERSION}", f"requirejs@{REQUIREJS_VERSION}")


@dataclass
class Slide:
    """One slide: its kind (title, section, question, result, summary), its HTML, its speaker notes
    (markdown)."""

    kind: str
    body: str
    notes: str = ""
    classes: list[str] = field(default_factory=list)


def _md(text: str) -> str:
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    return markdown2html_mistune(text)


def _paragraphs(markdown: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", markdown) if p.strip()]


def _short(paragraph: str, limit: int) -> str:
    """``paragraph`` on one line, cut after its last whole sentence (or word) within ``limit``."""
    text = " ".join(paragraph.split())
    if len(text) > limit:
        cut = text[:limit].rsplit(". ", 1)[0]
        text = cut + "." if len(cut) > limit // 3 else text[:limit].rsplit(" ", 1)[0] + " ..."
    return text


def _context(markdown: str, limit: int = 260) -> str:
    """What a question slide repeats of its section: the experiment's setup (the paragraph
    starting "Here"), else the section's first paragraph (a claim, a situation), shortened."""
    paragraphs = [p for p in _paragraphs(markdown) if not p.startswith(("#", "**Predict:**", "|"))]
    setup = next((p for p in paragraphs if p.startswith(("Here", "The same"))), paragraphs[0] if paragraphs else "")
    return _short(setup.lstrip("> "), limit)


def _opening(markdown: str, limit: int = 360) -> str:
    """A section's first paragraph and its experiment's setup (the paragraph starting "Here"),
    shortened: what the room needs to know before the question (not the "**Predict:**" line)."""
    paragraphs = [p for p in _paragraphs(markdown) if not p.startswith(("#", "**Predict:**", "|"))]
    if not paragraphs:
        return ""
    first = _short(paragraphs[0], limit)
    setup = next((p for p in paragraphs[1:] if p.startswith(("Here", "The same"))), "")
    return first + (f"\n\n**The experiment.** {_short(setup, limit)}" if setup else "")


def _wrapped(text: str) -> tuple[str, int]:
    """A run's text output as a slide shows it: lines wrapped at :data:`LINE_CHARS`, at most
    :data:`MAX_LINES` of them (then a line saying how many more the lesson has).

    >>> _wrapped("a\\nb")
    ('a\\nb', 2)
    >>> text, n = _wrapped("\\n".join(str(i) for i in range(30))); n, text.splitlines()[-1]
    (18, '... 13 more lines in the lesson')
    """
    lines: list[str] = []
    for line in text.rstrip("\n").split("\n"):
        line = line.rstrip()
        while len(line) > LINE_CHARS:
            cut = line.rfind(" ", 0, LINE_CHARS)
            cut = cut if cut > LINE_CHARS // 2 else LINE_CHARS
            lines.append(line[:cut])
            line = "    " + line[cut:].lstrip()
        lines.append(line)
    if len(lines) > MAX_LINES:
        more = len(lines) - (MAX_LINES - 1)
        lines = lines[: MAX_LINES - 1] + [f"... {more} more lines in the lesson"]
    return "\n".join(lines), len(lines)


def _outputs(cells) -> tuple[list[str], list[str]]:
    """(images as data URLs, texts) the run drew or printed in ``cells`` (widgets left out)."""
    images, texts = [], []
    for cell in cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if out.get("output_type") == "stream" and out.get("name") == "stdout":
                texts.append(out["text"])
            elif "application/vnd.jupyter.widget-view+json" in data:
                continue
            elif "image/png" in data:
                images.append("data:image/png;base64," + "".join(data["image/png"]).replace("\n", ""))
            elif "text/plain" in data and out.get("output_type") == "display_data":
                texts.append("".join(data["text/plain"]))
    return images, ["".join(texts).strip()] if "".join(texts).strip() else []


def _notes(*parts: str) -> str:
    return "\n\n".join(p.strip() for p in parts if p and p.strip())


def slides_of(kit, nb) -> list[Slide]:
    """The deck of a lesson: ``kit`` (tools.teaching_kit.Kit), ``nb`` the lesson run (its cells
    with their outputs)."""
    from tools.teaching_kit import key

    cells = nb.cells
    intro = cells[0].source if cells and cells[0].cell_type == "markdown" else ""
    goals = intro.split("**Learning goals**", 1)[1] if "**Learning goals**" in intro else ""
    goals = goals.split("\n\n**", 1)[0].strip()
    title_body = f"<h1>{html.escape(kit.title)}</h1>"
    if goals:
        title_body += f"<div class='goals'><h3>Learning goals</h3>{_md(goals)}</div>"
    slot = f"Slot: {kit.minutes} min; Run All {kit.run_all_s} s." if kit.run_all_s is not None else ""
    deck = [Slide("title", title_body, _notes(kit.notes.title, slot), ["title"])]
    by_name = {p.name: p for p in kit.predictions}
    section, section_notes, context = "", "", ""
    i = 1
    while i < len(cells):
        cell = cells[i]
        if cell.cell_type == "markdown":
            for h in [line for line in cell.source.split("\n") if line.startswith("## ")]:
                section = h[3:].strip()
                section_notes = kit.notes.for_heading(section) or ""
                if key(section) == "summary":
                    deck += _summary(cell.source, section_notes)
                    break
                if key(section) == "exercises":
                    break
                optional = kit.notes.optional.get(key(section))
                tag = f"<p class='optional'>optional: {html.escape(optional[1])}</p>" if optional else ""
                opening = _opening(cell.source.split(h, 1)[1])
                context = _context(cell.source.split(h, 1)[1])
                body = f"<h2>{_inline(section)}</h2>{tag}" + (
                    f"<div class='opening'>{_md(opening)}</div>" if opening else ""
                )
                deck.append(Slide("section", body, section_notes, ["section"]))
            i += 1
            continue
        names = [n for n in re.findall(r"^(\w+)\s*=\s*Prediction\(", cell.source, re.M) if n in by_name]
        if not names:
            i += 1
            continue
        p = by_name[names[0]]
        # the cells from the question to its reveal: what the run printed and drew for it
        j, held = i + 1, []
        while j < len(cells) and f"{p.name}.reveal(" not in cells[j].source:
            if cells[j].cell_type == "code":
                held.append(cells[j])
            elif re.search(r"^#{1,2} ", cells[j].source, re.M):
                break
            j += 1
        # a figure drawn after the reveal (``with prediction.after_lock_in():``) belongs to it too
        while j + 1 < len(cells) and f"{p.name}.after_lock_in(" in cells[j + 1].source:
            j += 1
            held.append(cells[j])
        deck += _prediction(p, held, section, section_notes, context)
        i = j + 1
    return deck


def _inline(markdown: str) -> str:
    return _md(markdown).strip().removeprefix("<p>").removesuffix("</p>")


def _prediction(p, held, section: str, talking: str, context: str = "") -> list[Slide]:
    answer = f"**Answer (the run, seed 1):** {p.answer}"
    notes = _notes(answer, p.explanation or "", f"**Talking points:** {talking}" if talking else "")
    if p.choices:
        choices = "".join(f"<li>{html.escape(c)}</li>" for c in p.choices)
        ask = f"<ol class='choices' type='A'>{choices}</ol>"
    else:
        ask = (
            "<p class='ask'>"
            + ("a few words" if p.kind == "note" else "a number")
            + ": write it down, then lock in</p>"
        )
    question = Slide(
        "question",
        f"<p class='kicker'>{_inline(section)}</p>"
        + (f"<div class='context'>{_md(context)}</div>" if context else "")
        + f"<h2 class='q'>Predict: {html.escape(p.question)}</h2>{ask}",
        notes,
        ["question"],
    )
    images, texts = _outputs(held)
    head = f"<p class='kicker'>Measured: {html.escape(p.question)}</p>"
    slides = [question]
    if texts:  # the run's table as text, as large as the canvas allows
        text, n = _wrapped(texts[0])
        widest = max(len(line) for line in text.splitlines())
        # n lines of 1.3 em in 520 px; the widest line (0.61 em a character in DejaVu Sans Mono)
        # in the 1 140 px between the margins
        size = max(11, min(22, int(520 / (n * 1.3)), int(1140 / (0.61 * max(widest, 1)))))
        slides.append(
            Slide(
                "result",
                f"{head}<pre class='out' style='font-size:{size}px'>{html.escape(text)}</pre>",
                notes,
                ["result"],
            )
        )
    for image in images[-1:]:  # the figure the run draws, on a slide of its own
        slides.append(Slide("figure", f"{head}<img class='figure' src='{image}' alt='the run'>", notes, ["figure"]))
    if len(slides) == 1:
        slides.append(Slide("result", f"{head}<p class='ask'>(the run shows it in the lesson)</p>", notes, ["result"]))
    return slides


def _summary(markdown: str, notes: str) -> list[Slide]:
    text = markdown.split("## Summary", 1)[1].split("\n## ", 1)[0]
    bullets = re.split(r"\n(?=- )", text.strip())
    bullets = [" ".join(b.lstrip("- ").split()) for b in bullets if b.strip().startswith("-")]
    if not bullets:  # a summary the run draws (lesson 08's table of verdicts): its words
        return [Slide("summary", f"<h2>Summary</h2><div class='summary'>{_md(_short(text, 500))}</div>", notes)]
    slides = []
    for k in range(0, len(bullets), BULLETS_PER_SLIDE):
        part = "\n".join(f"- {b}" for b in bullets[k : k + BULLETS_PER_SLIDE])
        slides.append(Slide("summary", f"<h2>Summary</h2><div class='summary'>{_md(part)}</div>", notes, ["summary"]))
    return slides


CSS = """
.reveal { font-family: "DejaVu Sans", "Liberation Sans", sans-serif; }
.reveal .slides section { text-align: left; height: 720px; box-sizing: border-box; padding: 36px 56px; }
.reveal h1 { font-size: 54px; text-transform: none; }
.reveal h2 { font-size: 40px; text-transform: none; line-height: 1.2; }
.reveal h2.q { font-size: 36px; }
.reveal h3 { font-size: 26px; text-transform: none; }
.reveal .goals, .reveal .opening, .reveal .summary { font-size: 24px; line-height: 1.4; }
.reveal .goals li, .reveal .summary li { margin-bottom: 8px; }
.reveal .context { font-size: 20px; line-height: 1.35; color: #37474f; background: #f5f7f8; padding: 8px 16px;
  border-left: 4px solid #90a4ae; margin-bottom: 16px; }
.reveal .context p { margin: 0; }
.reveal .kicker { font-size: 20px; color: #607d8b; margin: 0 0 12px 0; }
.reveal .optional { font-size: 20px; color: #8d6e63; font-style: italic; }
.reveal ol.choices { font-size: 30px; line-height: 1.5; margin-top: 24px; }
.reveal ol.choices li { margin-bottom: 12px; padding: 6px 14px; border: 2px solid #90a4ae; border-radius: 8px;
  list-style-position: inside; }
.reveal .ask { font-size: 28px; color: #455a64; margin-top: 36px; }
.reveal pre { box-shadow: none; width: 100%; margin: 0; }
.reveal pre.out { font-family: "DejaVu Sans Mono", monospace; white-space: pre; background: #f5f5f5;
  padding: 12px; line-height: 1.3; overflow: hidden; }
.reveal img.figure { display: block; margin: 0 auto; height: 590px; width: auto; max-width: 1160px; object-fit: contain; }
.reveal code { font-size: 0.9em; }
"""


def page(title: str, deck: list[Slide]) -> str:
    """The deck as one HTML page: reveal.js and its notes plugin from :data:`ASSETS` beside it."""
    sections = []
    for s in deck:
        notes = f"<aside class='notes'>{_md(s.notes)}</aside>" if s.notes else ""
        sections.append(f"<section class='{' '.join(s.classes)}' data-kind='{s.kind}'>{s.body}{notes}</section>")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<link rel="stylesheet" href="{ASSETS}/dist/reset.css">
<link rel="stylesheet" href="{ASSETS}/dist/reveal.css">
<link rel="stylesheet" href="{ASSETS}/dist/theme/white.css">
<style>{CSS}</style></head>
<body><div class="reveal"><div class="slides">
{chr(10).join(sections)}
</div></div>
<script src="{ASSETS}/dist/reveal.js"></script>
<script src="{ASSETS}/plugin/notes/notes.js"></script>
<script>
// press S for the speaker view: the answer, the run's explanation and the talking points
Reveal.initialize({{ width: {WIDTH}, height: {HEIGHT}, margin: 0.04, center: false, hash: true,
  slideNumber: "c/t", transition: "none", plugins: [RevealNotes] }});
</script>
</body></html>
"""


def deck_for(lesson_path: Path):
    """The lesson's kit and its run: (kit, the executed notebook)."""
    import nbformat

    from tools.notebook_outputs import execute
    from tools.teaching_kit import kit

    number = lesson_path.name.split("_", 1)[0]
    k = kit(number)
    nb = nbformat.read(lesson_path, as_version=4)
    execute(nb, lesson_path)
    return k, nb


def build(lesson_path: Path, out: Path = OUT) -> Path:
    """Write ``out/NN_name.slides.html`` (and the reveal.js folder beside it); returns its path."""
    k, nb = deck_for(lesson_path)
    modules = npm_assets()
    out.mkdir(parents=True, exist_ok=True)
    assets = out / ASSETS
    if not (assets / "plugin" / "notes" / "notes.js").exists():
        shutil.copytree(modules / "reveal.js" / "dist", assets / "dist", dirs_exist_ok=True)
        shutil.copytree(modules / "reveal.js" / "plugin" / "notes", assets / "plugin" / "notes", dirs_exist_ok=True)
    target = out / f"{lesson_path.stem}.slides.html"
    target.write_text(page(k.title, slides_of(k, nb)), encoding="utf-8")
    return target


def lessons_with_notes(notes_dir: Path = NOTES_DIR) -> list[Path]:
    from tools.teaching_kit import KIT_LESSONS, lesson_path

    return [lesson_path(n) for n in KIT_LESSONS if (notes_dir / f"{n}.md").exists()]


def main(argv: list[str] | None = None) -> int:
    from tools.teaching_kit import KitError

    ap = argparse.ArgumentParser(prog="python -m tools.lesson_slides", description=__doc__.split("\n\n")[0])
    ap.add_argument("lessons", nargs="*", type=Path, help="lesson notebooks (default: every lesson of the kit)")
    ap.add_argument("--out", type=Path, default=OUT, help=f"where the slides go (default: {OUT.relative_to(ROOT)})")
    args = ap.parse_args(argv)
    try:
        for lesson in args.lessons or lessons_with_notes():
            print(f"wrote {build(lesson, args.out)}")
    except (KitError, FileNotFoundError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print("open one in a browser; press S for the speaker view with the answers and talking points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
