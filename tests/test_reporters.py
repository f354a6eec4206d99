"""The four reporters: registering, their options from the file and the command line, and
what each renders."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.manager import Plugins
from bugbout.core.report.report import Report
from bugbout.plugins.reporters.html import HtmlReporter, render_html
from bugbout.plugins.reporters.markdown import render_markdown
from bugbout.plugins.reporters.terminal import render_terminal
from bugbout.render.report_sections import sections
from report_records import ERA, T1, T2, _Elements

REPORTERS = ("terminal", "markdown", "json", "html")


SECTIONS = (
    "Agents",
    "Retry rounds",
    "Picking one patch per bug",
    "Every patch through a merge gate",
    "Which tests tell a right fix from a wrong one",
    "How the tasks were found",
    "Why",
    "Tokens and time",
)


def _register(plugins: Plugins) -> None:
    """The reporter modules, unless the built-ins already hold them."""
    for name in REPORTERS:
        module = f"bugbout.plugins.reporters.{name}"
        if module not in plugins.distributions:
            plugins.register(importlib.import_module(module), name=module)


@pytest.mark.parametrize("name", REPORTERS)
def test_reporters_register_and_render(plugins: Plugins, report: Report, name: str) -> None:
    _register(plugins)
    reporter = plugins.create("reporter", name, {})
    assert plugins.get("reporter", name).spec.description
    expected = {"terminal": None, "markdown": "report.md", "json": "report.json"}
    assert reporter.filename == expected.get(name, "report.html")
    assert isinstance(reporter.render(report), str)


def test_reporter_options_from_the_file_and_the_command_line_reach_the_reports(
    report: Report, tmp_path: Path
) -> None:
    """``reporters: {html: {title: ...}}`` in ``bugbout.yaml``, overridden and extended
    on the command line, is what each reporter renders with."""
    from bugbout.config import compose_settings
    from bugbout.core.pipeline import check_verdict_plugins, report_plugins
    from bugbout.core.report.reporters import write_reports
    from bugbout.core.store.store import Store

    (tmp_path / "bugbout.yaml").write_text(
        "defaults: [base, _self_]\nproject: {source: src/x}\n"
        "reporters: {html: {title: From the file}, json: {indent: 4}}\n"
    )
    settings, plugins = compose_settings(tmp_path, ["reporters.terminal.color=true"])
    check_verdict_plugins(settings, plugins)
    store = Store(tmp_path / "out")
    written = write_reports(report, store, report_plugins(settings, plugins))
    assert written.files == ["report.md", "report.json", "report.html"]
    assert "<title>From the file</title>" in store.path("report.html").read_text()
    assert store.path("report.json").read_text().startswith('{\n    "schema"')
    assert "\x1b[" in written.printed["terminal"]  # in colour, as asked on the command line
    settings, _ = compose_settings(tmp_path, ["reporters.html.title=From the line"], plugins)
    write_reports(report, store, report_plugins(settings, plugins))
    assert "<title>From the line</title>" in store.path("report.html").read_text()


def test_two_instances_of_a_reporter_write_a_file_each(report: Report, tmp_path: Path) -> None:
    """An instance not named after its plugin writes its own name as the file; two
    that would write one file are a one-line error before any work."""
    from bugbout.config import compose_settings
    from bugbout.core.pipeline import check_verdict_plugins, report_plugins
    from bugbout.core.report.reporters import write_reports
    from bugbout.core.store.store import Store

    (tmp_path / "bugbout.yaml").write_text(
        "defaults: [base, _self_]\nproject: {source: src/x}\n"
        "reporters:\n  html: {title: Everything}\n  short: {reporter: html, title: Short}\n"
    )
    settings, plugins = compose_settings(tmp_path, [])
    check_verdict_plugins(settings, plugins)
    store = Store(tmp_path / "out")
    written = write_reports(report, store, report_plugins(settings, plugins))
    assert written.files == ["report.md", "report.json", "report.html", "short.html"]
    assert "<title>Everything</title>" in store.path("report.html").read_text()
    assert "<title>Short</title>" in store.path("short.html").read_text()
    settings, _ = compose_settings(tmp_path, ["+reporters.report={reporter: html}"], plugins)
    with pytest.raises(ConfigError, match=r"^reporters\.report: writes report\.html, as "):
        check_verdict_plugins(settings, plugins)
    with pytest.raises(ConfigError, match=r"^reporters\.short\.titel: no such setting; did you"):
        compose_settings(tmp_path, ["reporters.short.titel=x"], plugins)
    settings, _ = compose_settings(tmp_path, ["+reporters.short.titel=x"], plugins)
    with pytest.raises(
        ConfigError,
        match=r"^reporters\.short: reporter 'html': titel: no such option; did you mean title\?",
    ):
        check_verdict_plugins(settings, plugins)


@pytest.mark.parametrize("removal", [["~reporters.html"], ["reporters.html=null"]])
def test_a_reporter_is_removed_on_the_command_line(
    report: Report, tmp_path: Path, removal: list[str]
) -> None:
    from bugbout.config import compose_settings
    from bugbout.core.pipeline import report_plugins
    from bugbout.core.report.reporters import write_reports
    from bugbout.core.store.store import Store

    (tmp_path / "bugbout.yaml").write_text("defaults: [base, _self_]\nproject: {source: src/x}\n")
    settings, plugins = compose_settings(tmp_path, removal)
    written = write_reports(report, Store(tmp_path / "out"), report_plugins(settings, plugins))
    assert written.files == ["report.md", "report.json"]
    assert not (tmp_path / "out" / "report.html").exists()


def test_terminal(report: Report) -> None:
    text = render_terminal(report, width=160)
    for title in SECTIONS:
        assert title in text
    assert "\x1b[" not in text
    # no rich markup swallowed the tags (a long title folds over lines)
    assert '<script>alert("x")</sc' in text and "<b>bold</b>" in text
    alpha = next(line for line in text.splitlines() if " command (alpha-model) " in line)
    assert " ".join(alpha.split()) == "alpha command (alpha-model) 2 2 1 0 1 0 50.0% - 0"
    assert "\x1b[" in render_terminal(report, color=True)


def test_every_report_opens_with_how_sure_it_is(report: Report) -> None:
    """The headline and the intervals follow from the scores (alpha and beta each
    resolved one of the two scored tasks, not the same one)."""
    sure = report.confidence
    assert sure.headline == (
        "alpha and beta tie: each resolved 1 of the 2 tasks both were scored on (exact "
        "McNemar p = 1, Holm-adjusted 1 over 3 comparisons)."
    )
    assert sure.leader == ["alpha", "beta"]
    assert [(row.name, row.resolved, row.tasks) for row in sure.agents] == [
        ("alpha", 1, 2),
        ("beta", 1, 2),
        ("gamma", 0, 1),
    ]
    pairs = {(row.a, row.b): row for row in sure.pairs}
    assert (pairs["alpha", "beta"].only_a, pairs["alpha", "beta"].only_b) == (1, 1)
    assert pairs["alpha", "beta"].sentence.endswith(
        "no difference on these bugs (exact McNemar p = 1, Holm-adjusted 1 over 3 comparisons)."
    )
    assert pairs["alpha", "gamma"].tasks == 1, "compared only where both were scored"
    strict = next(row for row in sure.judges if row.a == "judge strict")
    # it abstained on the task alpha resolved: an abstention, not a loss to alpha
    assert (strict.b, strict.tasks, strict.only_a, strict.only_b, strict.abstained) == (
        "alpha",
        1,
        0,
        0,
        1,
    )
    assert strict.sentence.startswith("judge strict abstained on 1 of the 2 tasks alpha was")
    assert [part.title for part in sections(report)[:3]] == [
        "The decision",
        "How sure",
        "How costly",
    ]
    assert render_markdown(report).split("\n", 6)[4] == f"**{report.decision.text}**"
    assert sure.headline in render_markdown(report)
    assert sure.headline in render_terminal(report, width=200)


def test_markdown(report: Report) -> None:
    text = render_markdown(report)
    assert text.startswith("# bugbout report\n")
    for title in SECTIONS:
        assert f"\n## {title}\n" in text
    assert "| contestant | agent | attempted |" in text
    assert "| alpha | command (alpha-model) | 2 | 2 | 1 | 0 | 1 | 0 | 50.0% | - | 0 |" in text
    assert "| judge: majority | 2 | 0 | 1 | 50.0% | 50.0% |" in text
    assert "| an agent at random | 2 | 0 | - | 41.7% | 41.7% |" in text
    assert "| best possible | - | - | 2 | - | 100.0% |" in text
    assert "| (suite) | suite | 2 | 5 | 2 | 1 | 2 | 0 | 0 | 60.0% |" in text
    # a hostile title stays one cell, and shows as typed
    title_row = next(line for line in text.splitlines() if line.startswith(f"| {T1} "))
    assert r"\<script\>" in title_row and r"\| pipe" in title_row
    cells = re.split(r"(?<!\\)\|", title_row)[1:-1]
    assert len(cells) == len(("task", "issue", "title", "scored")) + 3 + 3
    for table_line in (line for line in text.splitlines() if line.startswith("|")):
        assert "\n" not in table_line


def test_task_pages_say_what_the_ground_truth_ran_in(report: Report) -> None:
    page = next(page for page in report.pages if page.id == T1)
    assert page.environment == ERA
    assert page.versions == {"python": "3.7.16", "pytest": "5.2.0", "six": "1.12.0"}
    line = f"{ERA}; versions: Python 3.7.16, pytest 5.2.0, six 1.12.0"
    assert f"\n- environment: {line}\n" in render_markdown(report)
    assert f'<p class="intro">environment: {line}</p>' in render_html(report)
    other = next(page for page in report.pages if page.id == T2)
    assert (other.environment, other.versions) == ("", {})
    assert "environment: " not in render_markdown(report).split(f"### {T2}")[1].split("###")[0]


def test_html_is_self_contained_and_escaped(report: Report) -> None:
    text = HtmlReporter().render(report)
    assert text.startswith("<!DOCTYPE html>")
    parser = _Elements()
    parser.feed(text)
    tags = {tag for tag, _ in parser.elements}
    assert not tags & {"script", "link", "img", "iframe", "object", "embed", "b"}, tags
    assert {"style", "svg", "rect", "table", "details"} <= tags
    for tag, attrs in parser.elements:
        assert not {"src", "srcset", "onerror", "onload"} & set(attrs), (tag, attrs)
        assert (attrs.get("href") or "#").startswith("#"), (tag, attrs)
    assert "url(" not in text and "@import" not in text and "http" not in text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in text
    assert "&lt;/pre&gt;&lt;/details&gt;" in text
    assert text.count('<svg class="chart"') == 3
    # no model has a price: the cost plot says so
    assert "Resolve rate against cost per resolved bug: no data" in text
    for title in SECTIONS:
        assert f"<h2>{title}</h2>" in text
