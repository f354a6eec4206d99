"""The ``__NAME__`` reporter: a few lines of plain text about a bout.

A reporter turns bugbout's :class:`~bugbout.reporters.Report` (every figure of the
bout, computed from the store) into text. With a ``filename`` the text is written to
the store (``.bugbout/``); without one it is printed after the bout.
"""

from __future__ import annotations

from collections.abc import Iterator

from bugbout.reporters import Options, Report, ReporterPlugin, hookimpl


class __TITLE__Options(Options):
    """Options of the ``__NAME__`` reporter."""

    filename: str | None = "__NAME__.txt"
    """The file written in the store; ``null`` prints the report instead."""


class __TITLE__Reporter:
    """Each contestant's resolve rate and each judge policy's picks, one line each."""

    name = "__NAME__"

    def __init__(self, options: __TITLE__Options | None = None) -> None:
        self.options = options or __TITLE__Options()
        self.filename = self.options.filename

    def render(self, report: Report) -> str:
        lines = [f"bugbout: {report.found.scored} scored tasks of {report.found.tasks} found"]
        for agent in report.agents:
            rate = "-" if agent.resolve_rate is None else f"{agent.resolve_rate:.0%}"
            lines.append(f"{agent.contestant}: {agent.resolved}/{agent.scored} resolved ({rate})")
        for policy in report.picking.policies:
            lines.append(
                f"judge {policy.policy}: {policy.picks} picks, {policy.resolved} resolved, "
                f"{policy.abstentions} abstentions"
            )
        return "\n".join(lines) + "\n"


@hookimpl
def bugbout_reporters() -> Iterator[ReporterPlugin]:
    yield ReporterPlugin(
        name=__TITLE__Reporter.name,
        factory=__TITLE__Reporter,
        options=__TITLE__Options,
        description="a few lines of text: resolve rates and each policy's picks",
    )
