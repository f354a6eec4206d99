"""The stable API for reporter plugins: their record, ``hookimpl``, ``Options``, and the
report, its sections as tables, and their text, Markdown and HTML forms.

A reporter plugin imports these names from here; ``bugbout.core`` is private and may
change in any release. Each name is imported the first time it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bugbout.core.contract.exports import lazy_exports

__all__ = [
    "TASK_STYLE",
    "TRANSCRIPT_STYLE",
    "AgentRow",
    "Bar",
    "NoOptions",
    "Options",
    "Report",
    "Reporter",
    "ReporterPlugin",
    "Section",
    "Segment",
    "Table",
    "Transcript",
    "bar_chart",
    "cost_chart",
    "create_plugin",
    "environment_line",
    "escape",
    "fmt_count",
    "fmt_rate",
    "fmt_seconds",
    "hookimpl",
    "markdown_table",
    "overview_pages",
    "page_html",
    "render_sections",
    "section_html",
    "sections",
    "task_pages_html",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "AgentRow": "bugbout.core.report.report",
        "Bar": "bugbout.render.html_page",
        "NoOptions": "bugbout.core.contract.types",
        "Options": "bugbout.core.contract.types",
        "Report": "bugbout.core.report.report",
        "Reporter": "bugbout.core.report.report_store",
        "ReporterPlugin": "bugbout.core.contract.types",
        "Section": "bugbout.render.report_sections",
        "Segment": "bugbout.render.html_page",
        "TASK_STYLE": "bugbout.render.html_tasks:STYLE",
        "TRANSCRIPT_STYLE": "bugbout.render.html_transcript:STYLE",
        "Table": "bugbout.render.report_sections",
        "Transcript": "bugbout.core.report.transcripts",
        "bar_chart": "bugbout.render.html_page",
        "cost_chart": "bugbout.render.report_costs",
        "create_plugin": "bugbout.core.contract.manager",
        "environment_line": "bugbout.core.report.report_tasks",
        "escape": "bugbout.render.markdown_text",
        "fmt_count": "bugbout.render.report_sections",
        "fmt_rate": "bugbout.render.report_sections",
        "fmt_seconds": "bugbout.render.report_sections",
        "hookimpl": "bugbout.core.contract.hookspecs",
        "markdown_table": "bugbout.render.markdown_text",
        "overview_pages": "bugbout.render.html_tasks",
        "page_html": "bugbout.render.html_page",
        "render_sections": "bugbout.render.terminal_text",
        "section_html": "bugbout.render.html_page",
        "sections": "bugbout.render.report_sections",
        "task_pages_html": "bugbout.render.html_tasks",
    },
)

if TYPE_CHECKING:
    from bugbout.core.contract.hookspecs import hookimpl
    from bugbout.core.contract.manager import create_plugin
    from bugbout.core.contract.types import NoOptions, Options, ReporterPlugin
    from bugbout.core.report.report import AgentRow, Report
    from bugbout.core.report.report_store import Reporter
    from bugbout.core.report.report_tasks import environment_line
    from bugbout.core.report.transcripts import Transcript
    from bugbout.render.html_page import Bar, Segment, bar_chart, page_html, section_html
    from bugbout.render.html_tasks import STYLE as TASK_STYLE
    from bugbout.render.html_tasks import overview_pages, task_pages_html
    from bugbout.render.html_transcript import STYLE as TRANSCRIPT_STYLE
    from bugbout.render.markdown_text import escape, markdown_table
    from bugbout.render.report_costs import cost_chart
    from bugbout.render.report_sections import (
        Section,
        Table,
        fmt_count,
        fmt_rate,
        fmt_seconds,
        sections,
    )
    from bugbout.render.terminal_text import render_sections
