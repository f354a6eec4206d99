"""The ``terminal`` reporter: the report's sections as rich tables, printed."""

from __future__ import annotations

import io
import shutil
from collections.abc import Iterator

from pydantic import Field
from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table as RichTable
from rich.text import Text

from bugbout import ReporterPlugin, hookimpl
from bugbout.core.contract.types import Options
from bugbout.core.report.report import Report
from bugbout.render.report_sections import Section, Table, sections


class TerminalOptions(Options):
    """Options of the ``terminal`` reporter."""

    width: int | None = Field(default=None, ge=40)
    """Columns the tables may use; ``null``: the terminal's width (120 when there is none)."""
    color: bool = False
    """Keep the styles as ANSI escape codes (for a terminal)."""


class TerminalReporter:
    """The report as rich tables, rendered to text (``filename`` is ``None``: printed)."""

    name = "terminal"
    filename: str | None = None

    def __init__(self, options: TerminalOptions | None = None) -> None:
        self.options = options or TerminalOptions()

    def render(self, report: Report) -> str:
        return self.render_sections("bugbout report", sections(report))

    def render_sections(self, title: str, parts: list[Section]) -> str:
        """``title``, then each section's rule, introduction and tables."""
        console = Console(
            file=io.StringIO(),
            record=True,
            width=self.options.width or shutil.get_terminal_size((120, 24)).columns,
            force_terminal=self.options.color,
            color_system="standard" if self.options.color else None,
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
        return console.export_text(styles=self.options.color)


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


def render_terminal(report: Report, *, width: int | None = None, color: bool = False) -> str:
    """The report as the terminal shows it."""
    return TerminalReporter(TerminalOptions(width=width, color=color)).render(report)


@hookimpl
def bugbout_reporters() -> Iterator[ReporterPlugin]:
    yield ReporterPlugin(
        name=TerminalReporter.name,
        factory=TerminalReporter,
        options=TerminalOptions,
        description="the report as tables on the terminal",
    )
