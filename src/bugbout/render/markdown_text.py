"""Sections' tables as Markdown: shared by the ``markdown`` reporter, the sweep summary
and the comparison of two bouts."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bugbout.render.report_sections import Table

_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&])")


def escape(text: str) -> str:
    """``text`` as one line of Markdown that shows as it is (inside a table cell too)."""
    return _SPECIAL.sub(r"\\\1", " ".join(text.split()))


def markdown_table(table: Table) -> list[str]:
    """A table as Markdown lines: its caption, then a GitHub-flavoured table or its note."""
    lines = [f"### {escape(table.caption)}", ""] if table.caption else []
    if not table.rows:
        return [*lines, f"*{escape(table.empty)}*"]
    align = ["---:" if index in table.numeric else "---" for index in range(len(table.columns))]
    lines.append("| " + " | ".join(escape(column) for column in table.columns) + " |")
    lines.append("| " + " | ".join(align) + " |")
    lines += ["| " + " | ".join(escape(cell) for cell in row) + " |" for row in table.rows]
    return lines
