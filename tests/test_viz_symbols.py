"""Every symbol the course prints or shows renders without an emoji font.

Debian's Chromium has no emoji font: a green check-mark box or a red cross rendered as an empty
box there. Each character above U+2000 in library code, exercises, tools and docs must be one
that DejaVu Sans has (the font every Linux desktop and matplotlib ship), and no emoji
presentation selector (U+FE0F) may turn a plain symbol into a missing emoji."""

from __future__ import annotations

import functools
from pathlib import Path

import matplotlib
import pytest
from fontTools.ttLib import TTFont

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ["course_lib", "exercises_src", "exercises", "solutions", "workshop", "tools", "notebooks/reference"]
SUFFIXES = {".py", ".md", ".ipynb", ".html", ".j2", ".txt"}


@functools.cache
def _dejavu() -> set[int]:
    font = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
    return set(TTFont(font)["cmap"].getBestCmap())


def _files():
    yield ROOT / "README.md"
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in SUFFIXES and "__pycache__" not in path.parts and path.is_file():
                yield path


def missing_glyphs(text: str, glyphs: set[int]) -> set[str]:
    """The characters of ``text`` a plain font cannot draw (emoji, emoji selectors)."""
    return {c for c in text if ord(c) >= 0x2000 and (ord(c) == 0xFE0F or ord(c) not in glyphs)}


def test_the_check_finds_the_emoji_that_rendered_as_boxes():
    glyphs = _dejavu()
    assert missing_glyphs("✅ passed ❌ failed 💥 ⏭️ ⚠️", glyphs) == {"✅", "❌", "💥", "⏭", "\ufe0f"}
    assert missing_glyphs("✓ passed ✗ failed ‼ – ⚠ ✏ → …", glyphs) == set()


@pytest.mark.parametrize("path", list(_files()), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_emoji_in_what_the_learner_sees(path):
    bad = missing_glyphs(path.read_text(encoding="utf-8", errors="replace"), _dejavu())
    assert not bad, f"{path.relative_to(ROOT)} uses {sorted(bad)}: no default font draws them; use ✓ ✗ or words"
