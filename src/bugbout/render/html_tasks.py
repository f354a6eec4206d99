"""The HTML report's task pages and the overview's filterable list of patches.

Every page lives in the one file: a task's page is a section shown when the address
names it (``#task-<id>``, CSS ``:target``), the overview otherwise. The filters by
agent and by verdict are radio buttons whose ``:checked`` state hides rows, in CSS
alone. Diffs are coloured line by line, with Python's keywords marked, here rather than
in the browser. Every piece of text from the records is escaped.
"""

from __future__ import annotations

import keyword
import re
from html import escape

from bugbout.core.report.reasons import SCORE_WORDS, STATUS_WORDS
from bugbout.core.report.report import Report, TaskRow
from bugbout.core.report.report_tasks import Diff, Grid, PatchView, TaskPage, environment_line
from bugbout.core.store.verdict_records import SUITE, UNFIXED
from bugbout.render.html_transcript import transcript_html

STYLE = """
.task-page { display: none; }
.task-page:target { display: block; }
main:has(.task-page:target) > #overview { display: none; }
a.back { display: inline-block; margin: 0 0 8px; color: #0969da; text-decoration: none; }
pre.diff { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; background: #f6f8fa;
           border: 1px solid #d0d7de; padding: 8px 0; overflow-x: auto; max-height: 640px; }
pre.diff span { display: block; padding: 0 12px; white-space: pre; }
pre.diff .add { background: #dafbe1; }
pre.diff .del { background: #ffebe9; }
pre.diff .hunk { color: #8250df; background: #f0eaff; }
pre.diff .meta { color: #57606a; font-weight: 600; }
pre.diff em.kw { color: #cf222e; font-style: normal; font-weight: 600; }
p.note { color: #9a6700; }
.verdict-good { color: #1a7f37; font-weight: 600; }
.verdict-bad { color: #cf222e; font-weight: 600; }
table.grid td.fail { background: #ffebe9; }
table.grid td.pass { background: #dafbe1; }
table.grid td.own { outline: 2px dashed #8c959f; outline-offset: -3px; }
table.grid td.none { color: #8c959f; }
ul.failing code { font-size: 12px; }
ul.failing span.line { color: #57606a; }
.filters { margin: 8px 0; }
.filters label { margin-right: 10px; }
.filters span.by { font-weight: 600; margin: 0 6px 0 12px; }
"""

_KEYWORDS = re.compile(r"\b(" + "|".join(keyword.kwlist) + r")\b")
_GOOD = {"resolved", "finished"}


def page_anchor(task_id: str, index: int) -> str:
    """A task page's anchor: its id when it is a plain word, else its position."""
    plain = re.fullmatch(r"[A-Za-z0-9_-]{1,64}", task_id)
    return f"task-{task_id}" if plain else f"task-{index + 1}"


def overview_pages(report: Report) -> str:
    """The overview's list of task pages and its filterable table of patches."""
    rows = {row.id: row for row in report.tasks}
    anchors = {page.id: page_anchor(page.id, i) for i, page in enumerate(report.pages)}
    links = "".join(
        f'<li><a href="#{anchors[page.id]}">{escape(page.id)}</a> '
        f"{escape(_title(rows.get(page.id)))}</li>"
        for page in report.pages
    )
    names = sorted({patch.name for page in report.pages for patch in page.patches})
    verdicts = sorted({_verdict(patch) for page in report.pages for patch in page.patches})
    out = [
        '<section id="task-pages"><h2>Task pages</h2>',
        '<p class="intro">Each task\'s evidence on a page of its own: the problem, the '
        "maintainers' fix, every patch with its status, audit and score, the "
        "cross-examination and the judges' picks.</p>",
        f"<ul>{links}</ul>" if links else '<p class="empty">No tasks.</p>',
    ]
    if names:
        out.append(_filters(names, verdicts))
        body = "".join(
            _patch_row(page, anchors[page.id], patch, names, verdicts)
            for page in report.pages
            for patch in page.patches
        )
        out.append(
            '<table class="patches"><thead><tr><th>task</th><th>agent</th><th>status</th>'
            "<th>score</th><th>audit</th></tr></thead>"
            f"<tbody>{body}</tbody></table></div>"
        )
    out.append("</section>")
    return "\n".join(out)


def _filters(names: list[str], verdicts: list[str]) -> str:
    """Radio buttons, and the CSS that hides the rows they do not select."""
    css = [".patches tr.row { display: table-row; }"]
    inputs = ['<div class="filters"><span class="by">agent:</span>']
    for group, values in (("a", names), ("v", verdicts)):
        if group == "v":
            inputs.append('<span class="by">verdict:</span>')
        inputs.append(
            f'<input type="radio" name="f{group}" id="f{group}-all" checked>'
            f'<label for="f{group}-all">all</label>'
        )
        for index, value in enumerate(values):
            inputs.append(
                f'<input type="radio" name="f{group}" id="f{group}{index}">'
                f'<label for="f{group}{index}">{escape(value)}</label>'
            )
            css.append(
                f"#f{group}{index}:checked ~ table.patches tr.row:not(.{group}{index}) "
                "{ display: none; }"
            )
    return f"<style>{chr(10).join(css)}</style>" + "".join(inputs)


def _patch_row(
    page: TaskPage, anchor: str, patch: PatchView, names: list[str], verdicts: list[str]
) -> str:
    classes = f"row a{names.index(patch.name)} v{verdicts.index(_verdict(patch))}"
    audit = SCORE_WORDS[patch.audit.verdict] if patch.audit else "-"
    return (
        f'<tr class="{classes}"><td><a href="#{anchor}">{escape(page.id)}</a></td>'
        f"<td>{escape(patch.name)}</td><td>{escape(_status(patch))}</td>"
        f"<td>{escape(_verdict(patch))}</td><td>{escape(audit)}</td></tr>"
    )


def _verdict(patch: PatchView) -> str:
    if patch.role == "examiner":
        return "examiner"
    return SCORE_WORDS[patch.score] if patch.score else "not scored"


def _status(patch: PatchView) -> str:
    status = STATUS_WORDS[patch.status] + ("" if patch.counted else " (not counted)")
    return f"{status}: {patch.reason}" if patch.reason else status


def _title(row: TaskRow | None) -> str:
    return f"{row.origin()}: {row.title}" if row else ""


def task_pages_html(report: Report) -> list[str]:
    """One section per task, shown when its anchor is the page's target."""
    rows = {row.id: row for row in report.tasks}
    return [
        _task_page(page, page_anchor(page.id, index), rows.get(page.id))
        for index, page in enumerate(report.pages)
    ]


def _task_page(page: TaskPage, anchor: str, row: TaskRow | None) -> str:
    out = [
        f'<section class="task-page" id="{anchor}">',
        '<a class="back" href="#overview">← overview</a>',
        f"<h2>Task {escape(page.id)} {escape(_title(row))}</h2>",
    ]
    if row is not None:
        scored = "scored" if row.scored else f"not scored: {row.reason or 'unknown'}"
        out.append(f'<p class="intro">{escape(scored)}</p>')
    if page.environment or page.versions:
        out.append(f'<p class="intro">environment: {escape(environment_line(page))}</p>')
    if row is not None:
        out.append("<h3>The problem</h3>")
        origin = f" ({row.statement_origin})" if row.statement_origin else ""
        out.append(f"<details open><summary>problem statement{escape(origin)}</summary>"
                   f"<pre>{escape(row.problem_statement or '(none)')}</pre></details>")  # fmt: skip
    out.append("<h3>The judges' picks</h3>")
    if page.picks:
        picks = "".join(
            f"<tr><td>{escape(p.policy)}</td><td>{escape(p.pick or 'abstained')}</td>"
            f"<td>{escape(p.reason)}</td></tr>"
            for p in page.picks
        )
        out.append(
            "<table><thead><tr><th>policy</th><th>pick</th><th>why</th></tr></thead>"
            f"<tbody>{picks}</tbody></table>"
        )
    else:
        out.append('<p class="empty">No judge gave a verdict on this task.</p>')
    out.append("<h3>The hidden tests</h3>")
    out.append(hidden_html(page))
    out.append("<h3>Cross-examination: who broke whom</h3>")
    out.append(grid_html(page.matrix))
    out.append("<h3>The patches</h3>")
    if not page.patches:
        out.append('<p class="empty">No agent attempted this task.</p>')
    out += [_patch_html(patch, f"{anchor}-{i + 1}") for i, patch in enumerate(page.patches)]
    out.append("<h3>The maintainers' fix</h3>")
    if page.fix is None:
        out.append('<p class="empty">The repository was not read: no fix to show.</p>')
    else:
        out.append(diff_html(page.fix, "the maintainers' fix", opened=False))
    out.append("</section>")
    return "\n".join(out)


def _patch_html(patch: PatchView, anchor: str) -> str:
    """A patch: its status, score, audit, diff and transcript (``anchor``: its steps' ids)."""
    role = "" if patch.role == "contestant" else f" ({patch.role})"
    round_ = f", round {patch.round}" if patch.round > 1 else ""
    status_class = "verdict-good" if patch.status.value in _GOOD else "verdict-bad"
    line = (
        f'<p>status: <span class="{status_class}">{escape(_status(patch))}</span>{escape(round_)}'
    )
    if patch.score is not None:
        score_class = "verdict-good" if patch.score.value in _GOOD else "verdict-bad"
        line += f'; score: <span class="{score_class}">{escape(SCORE_WORDS[patch.score])}</span>'
    out = [f"<h4>{escape(patch.name)}{escape(role)}</h4>", line + "</p>"]
    if patch.audit is not None:
        audit = patch.audit
        verdict_class = "verdict-good" if audit.verdict.value in _GOOD else "verdict-bad"
        seen = " (visible tests only)" if audit.visible_only else ""
        out.append(
            f"<p>audit by {escape(audit.auditor)}{escape(seen)}: "
            f'<span class="{verdict_class}">{escape(SCORE_WORDS[audit.verdict])}</span></p>'
        )
        failing = "".join(
            f"<li>{escape(f.kind)}: <code>{escape(f.test)}</code> "
            f'<span class="line">{escape(f.line)}</span></li>'
            for f in audit.failing
        ) + "".join(f"<li>tampering: {escape(reason)}</li>" for reason in audit.tampering)
        if failing:
            out.append(f'<ul class="failing">{failing}</ul>')
    if patch.diff.text:
        out.append(diff_html(patch.diff, f"{patch.name}'s patch", opened=True))
    else:
        out.append('<p class="empty">The patch is empty.</p>')
    out.append(transcript_html(patch.transcript, anchor))
    return "\n".join(out)


def hidden_html(page: TaskPage) -> str:
    """Every hidden fail-to-pass test, a row each, and each scored patch's outcome on it."""
    if not page.fail_to_pass:
        return '<p class="empty">No hidden fail-to-pass test: the task is not scored.</p>'
    patches = [patch for patch in page.patches if patch.score is not None]
    head = "".join(f"<th>{escape(patch.name)}</th>" for patch in patches)
    rows = []
    for test in page.fail_to_pass:
        cells = []
        for patch in patches:
            outcome = patch.fail_to_pass.get(test)
            text = outcome.value if outcome else "did not run"
            cells.append(f'<td class="{"pass" if text == "passed" else "fail"}">{text}</td>')
        rows.append(f"<tr><th><code>{escape(test)}</code></th>{''.join(cells)}</tr>")
    return (
        f'<table class="grid"><thead><tr><th>fail-to-pass test</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def grid_html(grid: Grid | None) -> str:
    """The matrix as a grid: a row per patch, a column per author's tests; each cell says
    how many of those tests fail on that patch (an author's own patch is outlined)."""
    if grid is None:
        return '<p class="empty">This task was not cross-examined.</p>'
    head = "".join(f"<th>{escape(_author(author))}</th>" for author in grid.authors)
    body = []
    for row in grid.rows:
        cells = []
        for author, cell in zip(grid.authors, row.cells, strict=True):
            classes = ["own"] if author == row.patch else []
            if not cell.tests:
                classes.append("none")
                text = "no outcome"
            else:
                classes.append("fail" if cell.failed else "pass")
                text = f"{cell.failed}/{cell.tests} fail"
                if cell.missing:
                    text += f", {cell.missing} did not run"
            tip = "failing: " + ", ".join(cell.failing) if cell.failing else text
            cells.append(
                f'<td class="{" ".join(classes)}" title="{escape(tip)}">{escape(text)}</td>'
            )
        patch = "the unfixed code" if row.patch == UNFIXED else row.patch
        body.append(f"<tr><th>{escape(patch)}</th>{''.join(cells)}</tr>")
    return (
        '<table class="grid"><thead><tr><th>patches ↓ · tests by →</th>'
        f"{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        "<p class=\"intro\">Each cell: how many of the column's tests fail on the row's "
        "patch. An author's tests on its own patch are outlined; they never judge it.</p>"
    )


def _author(author: str) -> str:
    return "the repository's suite" if author == SUITE else author


def diff_html(diff: Diff, what: str, *, opened: bool) -> str:
    """A diff, folded, coloured by line, with a note when it was cut."""
    lines = []
    python = False
    for line in diff.text.splitlines():
        if line.startswith("diff --git"):
            python = line.rstrip().endswith(".py")
            kind = "meta"
        elif line.startswith(("+++", "---", "index ", "new file", "deleted file")):
            kind = "meta"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "ctx"
        text = escape(line)
        if python and kind in ("add", "del", "ctx"):
            text = text[:1] + _KEYWORDS.sub(r'<em class="kw">\1</em>', text[1:])
        lines.append(f'<span class="{kind}">{text or " "}</span>')
    note = (
        f'<p class="note">Cut: {diff.truncated} more characters are not shown.</p>'
        if diff.truncated
        else ""
    )
    count = len(lines)
    summary = f"{what} ({count} lines)"
    return (
        f"<details{' open' if opened else ''}><summary>{escape(summary)}</summary>"
        f'<pre class="diff">{"".join(lines)}</pre>{note}</details>'
    )
