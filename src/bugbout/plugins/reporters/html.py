"""The ``html`` reporter: ``report.html``, one self-contained page.

Everything is inline: the CSS, and the plots, drawn as SVG with the page kit of
:mod:`bugbout.render.html_page`: bar charts (resolve rate per agent, the judges' picks
against the baselines, how well each author's tests separate right from wrong) and a
scatter plot (resolve rate against cost per resolved bug). Each task has a page of its
own in the same file (:mod:`bugbout.render.html_tasks`), linked from the overview. No
script, no font, no image or style sheet is loaded from anywhere. Every piece of text
from the records is escaped.
"""

from __future__ import annotations

from collections.abc import Iterator
from html import escape

from bugbout.reporters import (
    TASK_STYLE,
    TRANSCRIPT_STYLE,
    Bar,
    Options,
    Report,
    ReporterPlugin,
    Segment,
    bar_chart,
    cost_chart,
    fmt_rate,
    hookimpl,
    overview_pages,
    page_html,
    section_html,
    sections,
    task_pages_html,
)


class HtmlOptions(Options):
    """Options of the ``html`` reporter."""

    title: str = "bugbout report"
    """The page's title and heading."""


def _share(value: float | None) -> float:
    return value or 0.0


def resolve_rate_chart(report: Report) -> str:
    bars = [
        Bar(
            row.contestant,
            (Segment(_share(row.resolve_rate), "agent", f"{row.contestant}: resolved"),),
            f"{fmt_rate(row.resolve_rate)} ({row.resolved}/{row.scored})",
        )
        for row in report.agents
    ]
    return bar_chart("Resolve rate per agent", bars)


def picking_chart(report: Report) -> str:
    picking = report.picking
    if not picking.tasks:
        return bar_chart("The judges' picks against the baselines", [])
    bars = [
        Bar(
            f"judge: {row.policy}",
            (Segment(_share(row.resolve_rate), "policy", f"{row.policy}: resolved picks"),),
            f"{fmt_rate(row.resolve_rate)} ({row.resolved}/{picking.tasks}, "
            f"{row.abstentions} abstained)",
        )
        for row in picking.policies
    ]
    best = picking.best_agent
    for label, baseline, style in (
        (f"best agent: {best.agent}" if best.agent else "best agent", best, "baseline"),
        ("an agent at random", picking.random_agent, "baseline"),
        ("best possible", picking.oracle, "oracle"),
    ):
        bars.append(
            Bar(
                label,
                (Segment(_share(baseline.rate), style, label),),
                f"{fmt_rate(baseline.rate)} "
                + (
                    "expected"
                    if baseline.resolved is None
                    else f"({baseline.resolved}/{picking.tasks})"
                ),
            )
        )
    return bar_chart(
        "The judges' picks against the baselines (tasks resolved)",
        bars,
        legend=(("policy", "judge policy"), ("baseline", "baseline"), ("oracle", "best possible")),
    )


def separation_chart(report: Report) -> str:
    bars = []
    for row in report.separation:
        total = row.patches
        parts = (
            (row.true_positive, "tp", "right patches accepted"),
            (row.true_negative, "tn", "wrong patches rejected"),
            (row.false_positive, "fp", "wrong patches accepted"),
            (row.false_negative, "fn", "right patches rejected"),
        )
        bars.append(
            Bar(
                row.author,
                tuple(
                    Segment(count / total, style, f"{row.author}: {count} {tip}")
                    for count, style, tip in parts
                    if total and count
                ),
                f"{fmt_rate(row.accuracy)} right ({row.patches} patches)",
            )
        )
    return bar_chart(
        "How well each author's tests separate right patches from wrong ones",
        bars,
        legend=(
            ("tp", "right accepted"),
            ("tn", "wrong rejected"),
            ("fp", "wrong accepted"),
            ("fn", "right rejected"),
        ),
    )


class HtmlReporter:
    """The report as one self-contained HTML page with inline SVG plots."""

    name = "html"
    filename: str | None = "report.html"

    def __init__(self, options: HtmlOptions | None = None) -> None:
        self.options = options or HtmlOptions()

    def render(self, report: Report) -> str:
        charts = {
            "agents": [resolve_rate_chart(report)],
            "picking": [picking_chart(report)],
            "separation": [separation_chart(report)],
            "costs": [cost_chart(report)],
        }
        parts = sections(report)
        nav = "".join(f'<a href="#{section.key}">{escape(section.title)}</a>' for section in parts)
        found = report.found
        summary = (
            f"{found.scored} scored tasks of {found.tasks} found in {found.examined} commits; "
            f"contestants: {', '.join(report.contestants) or 'none'}; "
            f"examiners: {', '.join(report.examiners) or 'none'}; "
            f"judge policies: {', '.join(report.policies) or 'none'}."
        )
        body = [
            '<div id="overview">',
            f"<h1>{escape(self.options.title)}</h1>",
            section_html(parts[0], []),  # the decision first
            f'<p class="summary">{escape(summary)}</p>',
            f'<nav>{nav}<a href="#task-pages">Task pages</a></nav>',
        ]
        for section in parts[1:]:
            body.append(section_html(section, charts.get(section.key, [])))
            if section.key == "tasks":
                body.append(overview_pages(report))
        body.append("</div>")
        body += task_pages_html(report)
        return page_html(self.options.title, body, style=TASK_STYLE + TRANSCRIPT_STYLE)


def render_html(report: Report, *, title: str = "bugbout report") -> str:
    """The report as a self-contained HTML page."""
    return HtmlReporter(HtmlOptions(title=title)).render(report)


@hookimpl
def bugbout_reporters() -> Iterator[ReporterPlugin]:
    yield ReporterPlugin(
        name=HtmlReporter.name,
        factory=HtmlReporter,
        options=HtmlOptions,
        description="report.html: one self-contained page with the tables and plots",
    )
