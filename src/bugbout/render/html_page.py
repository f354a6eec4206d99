"""The house style of bugbout's HTML pages, shared by the report and the sweep summary.

One self-contained page: inline CSS (:data:`STYLE`), tables, and horizontal bar charts
and scatter plots drawn as inline SVG. No script, no font, no image or style sheet is
loaded from anywhere, and every piece of text is escaped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from html import escape

from bugbout.render.report_sections import Section, Table


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
    return _figure(title, "".join(out), legend)


@dataclass(frozen=True)
class Point:
    """One labelled point of a scatter plot; ``y`` is a share (0-1)."""

    label: str
    x: float
    y: float
    front: bool
    """On the front: drawn apart and joined to the other front points."""
    tip: str


SCATTER_HEIGHT = 360
SCATTER_LEFT = 60
SCATTER_WIDTH = 600
TICKS = 4


def scatter_chart(
    title: str,
    points: list[Point],
    *,
    x_label: str,
    x_text: Callable[[float], str],
    legend: tuple[tuple[str, str], ...] = (("front", "on the front"), ("behind", "behind it")),
) -> str:
    """A scatter plot over ``0..max x`` and 0-100 % as inline SVG, the front points
    joined in order of ``x``; a note when there are no points."""
    if not points:
        return f'<p class="empty">{escape(title)}: no data</p>'
    top, bottom = TOP, SCATTER_HEIGHT - 44
    span = max(point.x for point in points) * 1.1 or 1.0

    def at(point: Point) -> tuple[float, float]:
        x = SCATTER_LEFT + SCATTER_WIDTH * point.x / span
        return x, bottom - (bottom - top) * max(0.0, min(1.0, point.y))

    out = [
        f'<svg class="chart" width="{CHART_WIDTH}" height="{SCATTER_HEIGHT}" '
        f'viewBox="0 0 {CHART_WIDTH} {SCATTER_HEIGHT}" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
    ]
    right = SCATTER_LEFT + SCATTER_WIDTH
    for tick in range(TICKS + 1):
        y = bottom - (bottom - top) * tick / TICKS
        x = SCATTER_LEFT + SCATTER_WIDTH * tick / TICKS
        out.append(
            f'<line class="grid" x1="{SCATTER_LEFT}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}"/>'
        )
        out.append(
            f'<text class="tick" x="{SCATTER_LEFT - 6}" y="{y:.1f}" text-anchor="end" '
            f'dominant-baseline="middle">{100 * tick // TICKS}%</text>'
        )
        out.append(f'<line class="grid" x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}"/>')
        out.append(
            f'<text class="tick" x="{x:.1f}" y="{bottom + 16}" text-anchor="middle">'
            f"{escape(x_text(span * tick / TICKS))}</text>"
        )
    out.append(
        f'<text class="tick" x="{SCATTER_LEFT + SCATTER_WIDTH / 2}" y="{bottom + 34}" '
        f'text-anchor="middle">{escape(x_label)}</text>'
    )
    front = sorted((point for point in points if point.front), key=lambda p: (p.x, p.y))
    if len(front) > 1:
        line = " ".join(f"{x:.1f},{y:.1f}" for x, y in map(at, front))
        out.append(f'<polyline class="frontline" points="{line}"/>')
    for point in sorted(points, key=lambda p: p.front):
        x, y = at(point)
        label = point.label if len(point.label) <= MAX_LABEL else point.label[: MAX_LABEL - 1] + "…"
        style = "front" if point.front else "behind"
        out.append(
            f'<circle class="{style}" cx="{x:.1f}" cy="{y:.1f}" r="{7 if point.front else 5}">'
            f"<title>{escape(point.tip)}</title></circle>"
        )
        out.append(
            f'<text class="label" x="{x + 10:.1f}" y="{y:.1f}" dominant-baseline="middle">'
            f"{escape(label)}</text>"
        )
    out.append("</svg>")
    return _figure(title, "".join(out), legend)


def _figure(title: str, chart: str, legend: tuple[tuple[str, str], ...]) -> str:
    """A chart with its caption and its legend (a style and its meaning per key)."""
    keys = "".join(
        f'<span class="key"><svg width="12" height="12" aria-hidden="true">'
        f'<rect class="{escape(style)}" width="12" height="12"/></svg> {escape(text)}</span>'
        for style, text in legend
    )
    figure = f"<figure><figcaption>{escape(title)}</figcaption>{chart}"
    return figure + (f'<div class="legend">{keys}</div>' if keys else "") + "</figure>"


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
#decision p.intro { color: #1f2328; font-size: 1.2em; font-weight: 600; max-width: 100ch; }
p.nothing { color: #57606a; margin: 4px 0; }
ul.notes { color: #57606a; max-width: 100ch; }
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
.run { fill: #2f81f7; }
.reused { fill: #1a7f37; }
.front { fill: #1a7f37; }
.behind { fill: #8c959f; }
polyline.frontline { fill: none; stroke: #1a7f37; stroke-width: 2; stroke-dasharray: 6 4; }
.legend { display: flex; gap: 16px; color: #57606a; font-size: 12px; margin-top: 4px; }
.key svg { vertical-align: -1px; }
details { margin: 4px 0; }
details summary { cursor: pointer; }
details pre { white-space: pre-wrap; word-break: break-word; background: #f6f8fa;
              border: 1px solid #d0d7de; padding: 8px 12px; max-width: 100ch; }
"""


def section_html(section: Section, charts: list[str]) -> str:
    """A section: its heading, its introduction, ``charts`` (SVG), its tables and notes;
    one line when it has nothing to say."""
    nothing = section.nothing()
    if nothing is not None:
        key = escape(section.key)
        return f'<section id="{key}"><p class="nothing">{escape(nothing)}</p></section>'
    out = [
        f'<section id="{escape(section.key)}">',
        f"<h2>{escape(section.title)}</h2>",
        *(f'<p class="intro">{escape(part)}</p>' for part in section.intro.split("\n\n")),
        *charts,
    ]
    out += [table_html(table) for table in section.tables]
    if section.notes:
        out.append(
            '<ul class="notes">' + "".join(f"<li>{escape(n)}</li>" for n in section.notes) + "</ul>"
        )
    out.append("</section>")
    return "\n".join(out)


def table_html(table: Table) -> str:
    """A table with its caption, or its ``empty`` note when it has no rows."""
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


def page_html(title: str, body: list[str], *, style: str = "") -> str:
    """A whole page: ``title`` (plain text) and the ``body``'s HTML fragments, in order;
    ``style`` is CSS added to the house style."""
    title = escape(title)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{title}</title>\n<style>{STYLE}{style}</style>\n</head>\n"
        "<body>\n<main>\n" + "\n".join(body) + "\n</main>\n</body>\n</html>\n"
    )
