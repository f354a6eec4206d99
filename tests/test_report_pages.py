"""The report's page per task: its evidence, bounded diffs, and hostile text kept inert."""

from __future__ import annotations

import json

from bugbout.core.report.report import Report
from bugbout.core.report.report_tasks import (
    MAX_DIFF,
    Diff,
    FailingTest,
    GridCell,
    TaskPage,
    bounded,
)
from bugbout.core.store.race_records import AttemptStatus, Score
from bugbout.core.store.verdict_records import SUITE, UNFIXED
from bugbout.plugins.reporters.html import render_html
from bugbout.plugins.reporters.json import render_json
from bugbout.plugins.reporters.markdown import render_markdown
from report_records import HOSTILE_PATCH, T1, T2, T3, _Elements, _validate


def test_a_page_per_task_holds_its_evidence(evidence: Report) -> None:
    pages = {page.id: page for page in evidence.pages}
    assert list(pages) == [T1, T2, T3]
    first = pages[T1]
    assert first.fix == Diff(text=HOSTILE_PATCH)
    assert pages[T2].fix is None  # no diff given for it
    patches = {patch.name: patch for patch in first.patches}
    assert list(patches) == ["alpha", "beta", "gamma", "exam"]  # contestants first
    assert patches["alpha"].diff.text == HOSTILE_PATCH
    assert patches["alpha"].score == Score.RESOLVED and patches["alpha"].reason is None
    beta = patches["beta"]
    assert (beta.status, beta.reason) == (AttemptStatus.TIMEOUT, "no answer after 1800 s")
    assert beta.audit is not None and beta.audit.verdict == Score.FIXED_BUT_BROKE
    assert beta.audit.failing == [
        FailingTest(test="s1", kind="regression", line="KeyError: '<b>x'")
    ]
    assert patches["exam"].role == "examiner" and patches["exam"].score is None
    # the quota-stopped attempt is shown, its score marked as not counting
    gamma2 = next(p for p in pages[T2].patches if p.name == "gamma")
    assert gamma2.status == AttemptStatus.QUOTA and not gamma2.counted
    # alpha's last round on T2 is the one shown
    assert next(p for p in pages[T2].patches if p.name == "alpha").round == 2
    assert [(p.policy, p.pick) for p in first.picks] == [
        ("majority", "alpha"), ("strict", None), ("unanimous", "alpha")
    ]  # fmt: skip
    grid = first.matrix
    assert grid is not None
    assert grid.authors == ["alpha", "beta", "gamma", "exam", SUITE]
    assert [row.patch for row in grid.rows] == ["alpha", "beta", "gamma", UNFIXED]
    beta_row = grid.rows[1].cells
    assert beta_row[4] == GridCell(tests=3, failed=2, failing=["s1", "s3"])
    assert beta_row[3] == GridCell(tests=2, failed=1, failing=["e2"])
    # T2: beta's patch never ran the examiner's test
    assert pages[T2].matrix is not None
    assert pages[T2].matrix.rows[1].cells[2] == GridCell(missing=1)
    assert pages[T3].patches == [] and pages[T3].matrix is None


def test_a_diff_is_bounded_and_says_what_it_cut() -> None:
    line = "+" + "x" * 99 + "\n"
    full = line * (MAX_DIFF // len(line) + 10)
    diff = bounded(full)
    assert MAX_DIFF - len(line) < len(diff.text) <= MAX_DIFF
    assert full.startswith(diff.text) and diff.text.endswith("\n")  # whole lines
    assert diff.truncated == len(full) - len(diff.text)
    assert bounded(line) == Diff(text=line)
    page = render_html(Report(pages=[TaskPage(id="t", fix=diff)]))
    assert f"Cut: {diff.truncated} more characters are not shown." in page


def test_task_pages_escape_hostile_text_and_every_anchor_exists(evidence: Report) -> None:
    text = render_html(evidence)
    parser = _Elements()
    parser.feed(text)
    assert "script" not in {tag for tag, _ in parser.elements}
    assert "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "KeyError: &#x27;&lt;b&gt;x" in text
    ids = {attrs["id"] for _, attrs in parser.elements if attrs.get("id")}
    assert {"overview", f"task-{T1}", f"task-{T2}", f"task-{T3}"} <= ids
    hrefs = [attrs["href"] for _, attrs in parser.elements if attrs.get("href")]
    assert f"#task-{T1}" in hrefs and "#overview" in hrefs
    for href in hrefs:
        assert href.startswith("#") and href[1:] in ids, href
    # the diff is coloured by line, Python's keywords marked
    assert '<span class="del">-    <em class="kw">return</em> <em class="kw">None</em>' in text
    assert '<span class="add">+    <em class="kw">return</em> sum(items)' in text
    # the filters: a radio button per agent and per verdict, hiding the other rows
    for name in ("alpha", "beta", "gamma", "exam"):
        assert f"{name}</label>" in text
    assert "#fa0:checked ~ table.patches tr.row:not(.a0)" in text
    assert '<label for="fv-all">all</label>' in text


def test_markdown_tells_each_task_in_words(evidence: Report) -> None:
    text = render_markdown(evidence)
    section = text.split("\n## Tasks one by one\n", 1)[1]
    assert f"### {T2}: #12 Wrong total when empty" in section
    assert (
        "- **beta**: timeout: no answer after 1800 s; fixed-but-broke; "
        "audit fixed-but-broke: s1 (KeyError: '\\<b\\>x')"
    ) in section
    assert "- **gamma**: quota (not counted); no-fix; audit no-fix" in section
    assert "- judge strict abstains: r" in section


def test_the_json_report_holds_the_pages(evidence: Report) -> None:
    document = json.loads(render_json(evidence))
    _validate(document)
    assert document["pages"][0]["fix"]["text"] == HOSTILE_PATCH
    assert Report.model_validate(document) == evidence
