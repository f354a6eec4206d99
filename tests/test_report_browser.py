"""The HTML report rendered in headless Chromium: the charts, the cost plot, the task pages."""

from __future__ import annotations

from pathlib import Path

import pytest

from browser import _console_problems, read_png, screenshot
from bugbout.core.contract.settings import PriceSettings
from bugbout.core.report.costs import PriceTable
from bugbout.core.report.report import Report
from bugbout.core.report.report_build import build_report
from bugbout.plugins.reporters.html import HtmlReporter, render_html
from bugbout.render.html_page import page_html, section_html
from bugbout.render.report_costs import cost_chart
from bugbout.render.report_sections import sections
from report_records import T1, records


def test_html_renders_in_headless_chromium(report: Report, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html(report), encoding="utf-8")
    shot, log = screenshot(page, tmp_path)
    assert _console_problems(log) == [], log[-3000:]

    width, height, rows = read_png(shot)
    assert (width, height) == (1200, 2000)
    colours = {row[i : i + 3] for row in rows[::4] for i in range(0, len(row), 12)}
    assert len(colours) > 20, "the screenshot is (nearly) one colour"
    background = bytes((255, 255, 255))
    inked = sum(1 for row in rows for i in range(0, len(row), 3) if row[i : i + 3] != background)
    assert inked > width * height // 100, f"only {inked} pixels are not white"
    # the resolve-rate bars (#2f81f7) were drawn: the inline SVG rendered
    bar_blue = bytes((0x2F, 0x81, 0xF7))
    assert any(row[i : i + 3] == bar_blue for row in rows for i in range(0, len(row), 3)), (
        "no resolve-rate bar in the screenshot"
    )


PRICED = PriceTable((("models", PriceSettings(model="*-model", input=1, output=10)),), "x")
"""A price for every model of :func:`records`."""


def test_the_cost_plot_marks_the_front(tmp_path: Path) -> None:
    """alpha and beta resolve one task each; alpha for less (600 input and 160 output
    tokens against 1500 and 500): alpha is on the front, beta behind it."""
    report = build_report(**records(), prices=PRICED)  # type: ignore[arg-type]
    text = HtmlReporter().render(report)
    assert text.count('<svg class="chart"') == 4
    chart = cost_chart(report)
    assert chart in text
    assert '<circle class="front"' in chart and '<circle class="behind"' in chart
    assert "alpha: 50.0% resolved, $0.00220 per resolved bug (on the front)" in chart
    assert "beta: 50.0% resolved, $0.00650 per resolved bug</title>" in chart

    (section,) = [s for s in sections(report) if s.key == "costs"]
    page = tmp_path / "costs.html"
    page.write_text(page_html("costs", [section_html(section, [chart])]), encoding="utf-8")
    shot, log = screenshot(page, tmp_path)
    assert _console_problems(log) == [], log[-3000:]
    _, _, rows = read_png(shot)
    pixels = {row[i : i + 3] for row in rows for i in range(0, len(row), 3)}
    assert bytes((0x1A, 0x7F, 0x37)) in pixels, "no front point (#1a7f37) in the screenshot"
    assert bytes((0x8C, 0x95, 0x9F)) in pixels, "no point behind the front (#8c959f)"


def test_a_script_error_would_be_caught(tmp_path: Path) -> None:
    """The console check above is not vacuous: a page that throws is seen to throw."""
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><p>x</p><script>undefinedFunction()</script>")
    _, log = screenshot(page, tmp_path)
    assert any("Uncaught" in line for line in _console_problems(log)), log[-3000:]


@pytest.mark.slow
def test_a_task_page_shows_alone_when_its_anchor_is_the_target(
    evidence: Report, tmp_path: Path
) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html(evidence), encoding="utf-8")
    overview, log = screenshot(page, tmp_path)
    assert _console_problems(log) == [], log[-3000:]
    task, log = screenshot(page, tmp_path, f"task-{T1}")
    assert _console_problems(log) == [], log[-3000:]
    added = bytes((0xDA, 0xFB, 0xE1))  # an added diff line, a passing grid cell

    def shows(shot: Path, colour: bytes) -> bool:
        _, _, rows = read_png(shot)
        return any(row[i : i + 3] == colour for row in rows for i in range(0, len(row), 3))

    assert shows(task, added) and not shows(task, bytes((0x2F, 0x81, 0xF7)))
    assert shows(overview, bytes((0x2F, 0x81, 0xF7))) and not shows(overview, added)
