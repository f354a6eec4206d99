"""Sections as rich tables rendered to text: shared by the ``terminal`` reporter, the
sweep summary and the comparison of two bouts."""

from __future__ import annotations

import io
import shutil
from typing import TYPE_CHECKING

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table as RichTable
from rich.text import Text

if TYPE_CHECKING:
    from bugbout.render.report_sections import Section, Table


def render_sections(
    title: str, parts: list[Section], *, width: int | None = None, color: bool = False
) -> str:
    """``title``, then each section's rule, introduction and tables, as rich renders them
    (``width`` columns, by default the terminal's; ``color``: with ANSI styles)."""
    console = Console(
        file=io.StringIO(),
        record=True,
        width=width or shutil.get_terminal_size((120, 24)).columns,
        force_terminal=color,
        color_system="standard" if color else None,
        highlight=False,
        emoji=False,
    )
    console.print(Text(title, style="bold"))
    for section in parts:
        nothing = section.nothing()
        if nothing is not None:  # one line, not a screen
            console.print(Text(nothing, style="dim"))
            continue
        console.print()
        console.rule(Text(section.title, style="bold"), align="left")
        console.print(Text(section.intro, style="dim"))
        for table in section.tables:
            renderable = _table(table)
            # a table too wide for the terminal keeps every column (the terminal wraps)
            needed = Measurement.get(console, console.options, renderable).minimum
            console.print(renderable, width=max(console.width, needed), crop=False)
        for note in section.notes:
            console.print(Text(f"- {note}"))
    return console.export_text(styles=color)


def _table(table: Table) -> RichTable | Text:
    """A rich table; every cell is plain text (never rich markup)."""
    if not table.rows:
        caption = f"{table.caption}: " if table.caption else ""
        return Text(f"{caption}{table.empty}", style="italic")
    rich_table = RichTable(
        title=Text(table.caption, style="bold") if table.caption else None,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        header_style="bold",
        pad_edge=False,
    )
    for index, column in enumerate(table.columns):
        rich_table.add_column(
            Text(column),
            justify="right" if index in table.numeric else "left",
            overflow="fold",
            min_width=_longest_word(column, *(row[index] for row in table.rows)),
        )
    for row in table.rows:
        rich_table.add_row(*(Text(cell) for cell in row))
    return rich_table


def _longest_word(*texts: str, limit: int = 24) -> int:
    """The longest word in ``texts`` (at most ``limit``): a column is never narrower, so
    words are not split."""
    return min(limit, max((len(word) for text in texts for word in text.split()), default=1))
