"""The landing page of ``make demo``: a title and one line per demo notebook, linked.

Each line comes from the demo's own first markdown cell (its ``# title`` and first sentence), so a
new demo appears here without editing this page.

>>> lines = demo_lines("notebooks/demos")  # from the repository root
>>> [name for name, _, _ in lines][:2]
['consumer_crash.ipynb', 'delivery_simulator.ipynb']
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

#: the demos are the notebooks next to the index: Voila, Jupyter and nbclient run a notebook in its
#: own folder, so the default is the working directory (under any install of course_lib)
DEMOS = "."


def _title_and_line(notebook: Path) -> tuple[str, str]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    text = next("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    title = re.search(r"^#\s+(.+)$", text, re.M)
    body = " ".join(line for line in text.splitlines() if line.strip() and not line.startswith("#"))
    first = re.split(r"(?<=[.!?])\s", re.sub(r"[*_`]", "", body), maxsplit=1)[0]
    return (title.group(1).strip() if title else notebook.stem), first


def demo_lines(folder: str | Path = DEMOS) -> list[tuple[str, str, str]]:
    """``(file name, title, first sentence)`` for every demo but this index, by file name."""
    return [(nb.name, *_title_and_line(nb)) for nb in sorted(Path(folder).glob("*.ipynb")) if nb.name != "index.ipynb"]


def demo_gallery(folder: str | Path = DEMOS):
    """An HTML list of the demos; links are relative, so they work under any Voila base URL."""
    from IPython.display import HTML

    items = "".join(
        f"<li class='demo-item' style='margin:8px 0'><a href='{html.escape(name)}' style='font-size:120%'>"
        f"<b>{html.escape(title)}</b></a><br>{html.escape(line)}</li>"
        for name, title, line in demo_lines(folder)
    )
    return HTML(f"<ul class='demo-gallery' style='list-style:none;padding-left:0'>{items}</ul>")
