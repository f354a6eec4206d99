"""The decision that opens every report, read as a user reads it: `bugbout report` on a
stored bout (terminal, Markdown, JSON), and the HTML report's first screen laid out by
headless Chromium."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from browser import _chromium
from bugbout.core.report.report import Report
from bugbout.core.store.race_records import AttemptStatus, Score
from bugbout.core.store.store import Store
from bugbout.plugins.reporters.html import render_html
from cli_runs import bugbout
from report_records import _validate
from stored_bouts import Outcome, store_bout, task_ids

R, W = Score.RESOLVED, Score.WRONG_FIX
PRICES = (
    "prices:\n"
    "  dear: {model: alpha-model, input: 3, output: 15}\n"
    "  cheap: {model: beta-model, input: 1, output: 5}\n"
)
"""alpha costs 3 times what beta does per token."""
MILLION = {"input_tokens": 1_000_000}


def _report(project: Path) -> Report:
    """``bugbout report --format json`` in ``project``, as a user runs it."""
    ran = bugbout("report", "--format", "json", cwd=project)
    assert ran.returncode == 0, ran.stderr
    document = json.loads(ran.stdout)
    _validate(document)
    return Report.model_validate(document)


def _bout(project: Path, alpha: str, beta: str) -> Store:
    """alpha and beta's outcomes (``R`` resolved, ``W`` wrong fix, ``-`` quota), each
    attempt a million input tokens, at :data:`PRICES`."""
    ids = task_ids(len(alpha))
    kinds: dict[str, Outcome] = {"R": R, "W": W, "-": AttemptStatus.QUOTA}
    outcomes = {
        name: {t: kinds[mark] for t, mark in zip(ids, marks, strict=True)}
        for name, marks in (("alpha", alpha), ("beta", beta))
    }
    usage = {name: dict.fromkeys(ids, MILLION) for name in outcomes}
    store = store_bout(project, outcomes, usage=usage)
    with (project / "bugbout.yaml").open("a") as config:
        config.write(PRICES)
    return store


@pytest.mark.slow
def test_a_cheaper_agent_not_distinguishable_from_the_leader_is_picked(tmp_path: Path) -> None:
    """alpha 6/10, beta 5/10 (2 tasks apart, p = 1): the data do not tell them apart, and
    beta's resolved bug costs $2 (10 attempts at $1 over 5) against alpha's $5 ($30 over 6)."""
    _bout(tmp_path, "RRRRRRWWWW", "RRRRWRWWWW")
    decision = _report(tmp_path).decision
    assert decision.pick == "beta" and not decision.distinguishable
    assert decision.text == (
        "No contestant is distinguishably better on 10 scored tasks; pick beta, the cheapest "
        "per resolved bug: resolves 5/10 (24-76%), $2.00 a resolved bug; alpha (6/10) is "
        "not distinguishable and costs 2.5x more."
    )
    assert [(o.name, o.standing, o.cost_per_resolved) for o in decision.options] == [
        ("beta", "picked", 2.0),
        ("alpha", "not distinguishable", 5.0),
    ]

    ran = bugbout("report", "--format", "markdown", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[:5] == ["# bugbout report", "", "## The decision", "", f"**{decision.text}**"]
    assert "| beta | 5/10 | 24-76% | $2.00 | picked |" in lines[5:12]

    ran = bugbout("report", "--format", "terminal", cwd=tmp_path)
    first_screen = " ".join(ran.stdout.splitlines()[:12])
    assert "pick beta, the cheapest per resolved bug" in " ".join(first_screen.split())
    assert "costs 2.5x more" in " ".join(first_screen.split())


def test_an_agent_distinguishably_better_is_picked_whatever_it_costs(tmp_path: Path) -> None:
    """alpha resolves 10 of 12 tasks, beta 1 of the same 12 (9-0 where they differ)."""
    _bout(tmp_path, "RRRRRRRRRRWW", "RWWWWWWWWWWW")
    decision = _report(tmp_path).decision
    assert decision.pick == "alpha" and decision.distinguishable
    assert decision.text == (
        "Pick alpha: resolves 10/12 (55-95%), $3.60 a resolved bug; beta (1/12) resolves "
        "distinguishably fewer."
    )
    document = json.loads(bugbout("report", "--format", "json", cwd=tmp_path).stdout)
    assert list(document)[:2] == ["schema", "decision"]


def test_nothing_is_picked_when_nothing_was_resolved(tmp_path: Path) -> None:
    _bout(tmp_path, "WWW", "WW-")
    decision = _report(tmp_path).decision
    assert decision.pick is None
    assert decision.text == "No contestant resolved any of the 3 scored tasks: nothing to pick."


def test_empty_sections_take_one_line(tmp_path: Path) -> None:
    """No judge, no audit, no cross-examination: those sections are one line each."""
    _bout(tmp_path, "RRW", "RWW")
    text = bugbout("report", "--format", "terminal", cwd=tmp_path).stdout
    assert "Tampered: no patch tampered with a test run." in text.splitlines()
    assert "Which tests tell a right fix from a wrong one: no cross-examination." in (
        text.splitlines()
    )
    markdown = bugbout("report", "--format", "markdown", cwd=tmp_path).stdout
    assert "## Tampered" not in markdown
    assert "*Tampered: no patch tampered with a test run.*" in markdown.splitlines()


PROBE = """<script>
const seen = [];
for (const node of document.querySelectorAll("h1, h2, p, td, th")) {
  const box = node.getBoundingClientRect();
  if (box.height > 0 && box.bottom <= window.innerHeight) seen.push(node.innerText);
}
const probe = document.createElement("pre");
probe.id = "first-screen";
probe.textContent = JSON.stringify(seen);
document.body.appendChild(probe);
</script>"""
"""Added to a copy of the page by the test only (the report has no script): the text of
every heading, paragraph and cell laid out within the first screen."""


def _first_screen(html: str, tmp_path: Path, height: int = 800) -> list[str]:
    """What headless Chromium lays out in the first ``height`` pixels of ``html``."""
    chromium = _chromium()
    assert chromium is not None, "Chromium is not installed"
    page = tmp_path / "probed.html"
    page.write_text(html.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    ran = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", f"--window-size=1200,{height}",
         "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-2000:]
    start = ran.stdout.index('<pre id="first-screen">') + len('<pre id="first-screen">')
    text = ran.stdout[start : ran.stdout.index("</pre>", start)]
    found: list[str] = json.loads(text.replace("&quot;", '"').replace("&amp;", "&"))
    return found


def test_the_html_reports_first_screen_is_the_decision(tmp_path: Path) -> None:
    _bout(tmp_path / "project", "RRRRRRWWWW", "RRRRWRWWWW")
    report = _report(tmp_path / "project")
    html = render_html(report)
    assert "<script" not in html
    seen = _first_screen(html, tmp_path)
    assert seen[:3] == ["bugbout report", "The decision", report.decision.text]
    cells = set(seen)
    assert {"beta", "5/10", "24-76%", "$2.00", "picked"} <= cells
    assert {"alpha", "6/10", "$5.00"} <= cells
    assert "Agents" not in cells, "the attempt tables come after the first screen"


def test_one_contestant_without_a_price_is_picked_and_its_cost_not_known(
    tmp_path: Path,
) -> None:
    store_bout(tmp_path, {"alpha": {"t00": R, "t01": R, "t02": W}})
    decision = _report(tmp_path).decision
    assert decision.text == (
        "Pick alpha, the only contestant: resolves 2/3 (21-94%); cost per resolved bug not known."
    )


def test_without_prices_the_leader_is_picked_among_those_not_told_apart(tmp_path: Path) -> None:
    """alpha 2/3, beta 1/3, no price: nothing tells them apart and no cost is known, so
    the pick is the leader."""
    store_bout(
        tmp_path, {"alpha": {"t00": R, "t01": R, "t02": W}, "beta": {"t00": R, "t01": W, "t02": W}}
    )
    decision = _report(tmp_path).decision
    assert decision.pick == "alpha" and not decision.distinguishable
    assert decision.text == (
        "No contestant is distinguishably better on 3 scored tasks; pick alpha, the leader: "
        "resolves 2/3 (21-94%); beta (1/3) is not distinguishable; cost per resolved bug not "
        "known for alpha and beta."
    )
    assert [(o.name, o.standing) for o in decision.options] == [
        ("alpha", "picked"),
        ("beta", "not distinguishable"),
    ]


def test_leaders_that_tie_are_named_together_not_one_as_the_leader(tmp_path: Path) -> None:
    """alpha, beta and gamma each resolve 2/3, with no price: the decision says the three
    tie for the lead instead of calling the first by name the leader."""
    split = {"t00": R, "t01": R, "t02": W}
    store_bout(tmp_path, {name: dict(split) for name in ("alpha", "beta", "gamma")})
    decision = _report(tmp_path).decision
    assert not decision.distinguishable
    assert decision.text.startswith(
        "No contestant is distinguishably better on 3 scored tasks; alpha, beta and gamma tie "
        "for the lead: pick any of them (alpha resolves 2/3 (21-94%))"
    )
    assert "the leader" not in decision.text
