"""The ``markdown`` reporter: ``report.md``, a heading and GitHub-flavoured tables per
section."""

from __future__ import annotations

import re
from collections.abc import Iterator

from bugbout import ReporterPlugin, hookimpl
from bugbout.core.report import Report
from bugbout.core.report_sections import Table, sections
from bugbout.core.types import NoOptions

_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&])")


def escape(text: str) -> str:
    """``text`` as one line of Markdown that shows as it is (inside a table cell too)."""
    return _SPECIAL.sub(r"\\\1", " ".join(text.split()))


class MarkdownReporter:
    """The report as Markdown (GitHub-flavoured tables)."""

    name = "markdown"
    filename: str | None = "report.md"

    def __init__(self, options: NoOptions | None = None) -> None:
        self.options = options

    def render(self, report: Report) -> str:
        lines = ["# bugbout report", ""]
        if report.confidence.headline:
            lines += [f"**{escape(report.confidence.headline)}**", ""]
        lines += [
            "- " + escape(f"{report.found.scored} scored tasks of {report.found.tasks} found"),
            "- contestants: " + (", ".join(map(escape, report.contestants)) or "none"),
            "- examiners: " + (", ".join(map(escape, report.examiners)) or "none"),
            "- judge policies: " + (", ".join(map(escape, report.policies)) or "none"),
            "",
        ]
        for section in sections(report):
            lines += [f"## {escape(section.title)}", "", escape(section.intro), ""]
            for table in section.tables:
                lines += [*markdown_table(table), ""]
        return "\n".join(lines).rstrip() + "\n"


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


def render_markdown(report: Report) -> str:
    """The report as Markdown."""
    return MarkdownReporter().render(report)


@hookimpl
def bugbout_reporters() -> Iterator[ReporterPlugin]:
    yield ReporterPlugin(
        name="markdown",
        factory=MarkdownReporter,
        description="report.md: the report's sections as GitHub-flavoured Markdown tables",
    )
