"""Outcome tables: what happened to each message, and the checker's one-sentence verdict.

Taught in notebooks/02_acks_and_durability.
"""

from __future__ import annotations

import html

ROWS = ("delivered once", "lost (acknowledged)", "duplicated", "reordered", "not delivered (producer told)")


def outcome_html(result) -> str:
    """HTML for a :class:`course_lib.judge.checker.CheckResult`: counts and the verdict sentence."""
    table = result.outcome_table()
    colour = "#2e7d32" if not result.found else ("#ef6c00" if result.valid else "#c62828")
    cells = "".join(
        f"<tr data-outcome='{html.escape(k)}'><td>{html.escape(k)}</td>"
        f"<td class='oc-count' style='text-align:right;padding-left:12px'>{table[k]}</td></tr>"
        for k in ("sent", *ROWS)
    )
    return (
        f"<div class='outcome'><p class='oc-summary' style='color:{colour}'><b>"
        f"{html.escape(result.summary())}</b></p><table>{cells}</table></div>"
    )


def outcome_text(result) -> str:
    """The outcome table as aligned text, then the verdict (stable, for checked notebook cells)."""
    table = result.outcome_table()
    lines = [f"{k:<30} {table[k]:>4}" for k in ("sent", *ROWS)]
    return "\n".join(lines + [result.summary()])
