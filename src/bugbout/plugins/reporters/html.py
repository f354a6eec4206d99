"""The ``html`` reporter: ``report.html``, one self-contained page.

Everything is inline: the CSS, and the plots, drawn here as SVG bar charts (resolve rate
per agent, the judges' picks against the baselines, how well each author's tests separate
right from wrong). No script, no font, no image or style sheet is loaded from anywhere.
Every piece of text from the records is escaped.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from html import escape

from pydantic import BaseModel, ConfigDict

from bugbout import ReporterPlugin, hookimpl
from bugbout.core.report import Report, Section, Table, fmt_count, fmt_rate, sections


class HtmlOptions(BaseModel):
    """Options of the ``html`` reporter."""

    model_config = ConfigDict(extra="forbid")

    title: str = "bugbout report"
    """The page's title and heading."""


@dataclass(frozen=True)
class Segment:
    """A part of a bar: its share of the full width, its style and what it means."""

    share: float
    style: str
    tip: str


@dataclass(frozen=True)
class Bar:
    """One labelled bar, made of segments, with the figure written after it."""

    label: str
    segments: tuple[Segment, ...]
    text: str


CHART_WIDTH = 900
LABEL_WIDTH = 210
PLOT_WIDTH = 400
ROW_HEIGHT = 30
BAR_HEIGHT = 18
TOP = 12
BOTTOM = 26
MAX_LABEL = 30


def bar_chart(title: str, bars: list[Bar], *, legend: tuple[tuple[str, str], ...] = ()) -> str:
    """A horizontal bar chart over 0-100 % as inline SVG, or a note when there are no bars."""
    if not bars:
        return f'<p class="empty">{escape(title)}: no data</p>'
    height = TOP + ROW_HEIGHT * len(bars) + BOTTOM
    x0 = LABEL_WIDTH
    out = [
        f'<svg class="chart" width="{CHART_WIDTH}" height="{height}" '
        f'viewBox="0 0 {CHART_WIDTH} {height}" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
    ]
    bottom = TOP + ROW_HEIGHT * len(bars)
    for tick in range(0, 101, 25):
        x = x0 + PLOT_WIDTH * tick / 100
        out.append(f'<line class="grid" x1="{x:.1f}" y1="{TOP - 4}" x2="{x:.1f}" y2="{bottom}"/>')
        out.append(
            f'<text class="tick" x="{x:.1f}" y="{bottom + 16}" text-anchor="middle">{tick}%</text>'
        )
    for index, bar in enumerate(bars):
        y = TOP + ROW_HEIGHT * index + (ROW_HEIGHT - BAR_HEIGHT) / 2
        label = bar.label if len(bar.label) <= MAX_LABEL else bar.label[: MAX_LABEL - 1] + "…"
        out.append(
            f'<text class="label" x="{x0 - 8}" y="{y + BAR_HEIGHT / 2:.1f}" text-anchor="end" '
            f'dominant-baseline="middle"><title>{escape(bar.label)}</title>{escape(label)}</text>'
        )
        x = float(x0)
        for segment in bar.segments:
            width = PLOT_WIDTH * max(0.0, min(1.0, segment.share))
            if width <= 0:
                continue
            out.append(
                f'<rect class="{escape(segment.style)}" x="{x:.1f}" y="{y:.1f}" '
                f'width="{width:.1f}" height="{BAR_HEIGHT}"><title>{escape(segment.tip)}</title>'
                "</rect>"
            )
            x += width
        out.append(
            f'<text class="value" x="{x0 + PLOT_WIDTH + 8}" y="{y + BAR_HEIGHT / 2:.1f}" '
            f'dominant-baseline="middle">{escape(bar.text)}</text>'
        )
    out.append("</svg>")
    chart = "".join(out)
    keys = "".join(
        f'<span class="key"><svg width="12" height="12" aria-hidden="true">'
        f'<rect class="{escape(style)}" width="12" height="12"/></svg> {escape(text)}</span>'
        for style, text in legend
    )
    figure = f"<figure><figcaption>{escape(title)}</figcaption>{chart}"
    return figure + (f'<div class="legend">{keys}</div>' if keys else "") + "</figure>"


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
                f"{fmt_rate(baseline.rate)} ({fmt_count(baseline.resolved)}/{picking.tasks})",
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


STYLE = """
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: #1f2328; background: #ffffff; margin: 0; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 32px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 6px; padding-bottom: 4px; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 15px; margin: 18px 0 6px; }
p.intro { color: #57606a; margin: 4px 0 12px; max-width: 80ch; }
p.summary { color: #57606a; margin: 0 0 8px; }
nav a { color: #0969da; margin-right: 14px; text-decoration: none; }
table { border-collapse: collapse; margin: 8px 0 16px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d0d7de; padding: 4px 9px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; }
td.num, th.num { text-align: right; }
tr:nth-child(even) td { background: #fbfcfd; }
p.empty { color: #57606a; font-style: italic; }
figure { margin: 12px 0 20px; }
figcaption { font-weight: 600; margin-bottom: 4px; }
svg.chart { display: block; max-width: 100%; height: auto; }
svg text { font: 12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; fill: #1f2328; }
svg text.tick { fill: #57606a; font-size: 11px; }
svg line.grid { stroke: #d0d7de; stroke-width: 1; }
.agent { fill: #2f81f7; }
.policy { fill: #8250df; }
.baseline { fill: #8c959f; }
.oracle { fill: #1a7f37; }
.tp { fill: #1a7f37; }
.tn { fill: #4ac26b; }
.fp { fill: #cf222e; }
.fn { fill: #fb8f44; }
.legend { display: flex; gap: 16px; color: #57606a; font-size: 12px; margin-top: 4px; }
.key svg { vertical-align: -1px; }
details { margin: 4px 0; }
details summary { cursor: pointer; }
details pre { white-space: pre-wrap; word-break: break-word; background: #f6f8fa;
              border: 1px solid #d0d7de; padding: 8px 12px; max-width: 100ch; }
"""


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
        }
        parts = sections(report)
        title = escape(self.options.title)
        nav = "".join(f'<a href="#{section.key}">{escape(section.title)}</a>' for section in parts)
        found = report.found
        summary = (
            f"{found.scored} scored tasks of {found.tasks} found in {found.examined} commits; "
            f"contestants: {', '.join(report.contestants) or 'none'}; "
            f"examiners: {', '.join(report.examiners) or 'none'}; "
            f"judge policies: {', '.join(report.policies) or 'none'}."
        )
        body = [
            f"<h1>{title}</h1>",
            f'<p class="summary">{escape(summary)}</p>',
            f"<nav>{nav}</nav>",
        ]
        for section in parts:
            body.append(_section(section, charts.get(section.key, [])))
            if section.key == "tasks":
                body.append(_statements(report))
        return (
            "<!DOCTYPE html>\n"
            '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n"
            "<body>\n<main>\n" + "\n".join(body) + "\n</main>\n</body>\n</html>\n"
        )


def _section(section: Section, charts: list[str]) -> str:
    out = [
        f'<section id="{escape(section.key)}">',
        f"<h2>{escape(section.title)}</h2>",
        f'<p class="intro">{escape(section.intro)}</p>',
        *charts,
    ]
    out += [_table(table) for table in section.tables]
    out.append("</section>")
    return "\n".join(out)


def _table(table: Table) -> str:
    caption = f"<h3>{escape(table.caption)}</h3>" if table.caption else ""
    if not table.rows:
        return f'{caption}<p class="empty">{escape(table.empty)}</p>'

    def cls(index: int) -> str:
        return ' class="num"' if index in table.numeric else ""

    head = "".join(f"<th{cls(i)}>{escape(column)}</th>" for i, column in enumerate(table.columns))
    rows = "".join(
        "<tr>" + "".join(f"<td{cls(i)}>{escape(cell)}</td>" for i, cell in enumerate(row)) + "</tr>"
        for row in table.rows
    )
    return f"{caption}<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def _statements(report: Report) -> str:
    """Each task's problem statement, folded."""
    items = [
        f"<details><summary>{escape(task.id)} #{task.issue}: {escape(task.title)}</summary>"
        f"<pre>{escape(task.problem_statement)}</pre></details>"
        for task in report.tasks
        if task.problem_statement
    ]
    if not items:
        return ""
    heading = '<section id="problem-statements"><h3>Problem statements</h3>'
    return heading + "".join(items) + "</section>"


def render_html(report: Report, *, title: str = "bugbout report") -> str:
    """The report as a self-contained HTML page."""
    return HtmlReporter(HtmlOptions(title=title)).render(report)


@hookimpl
def bugbout_reporters() -> Iterator[ReporterPlugin]:
    yield ReporterPlugin(
        name="html",
        factory=HtmlReporter,
        options=HtmlOptions,
        description="report.html: one self-contained page with the tables and plots",
    )
