"""The ``terminal`` reporter: the report's sections as rich tables, printed."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import Field

from bugbout.reporters import Options, Report, ReporterPlugin, hookimpl, sections


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
        from bugbout.reporters import render_sections

        return render_sections(
            "bugbout report", sections(report), width=self.options.width, color=self.options.color
        )


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
