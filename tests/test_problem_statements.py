"""Problem statements: what is kept of an issue's text, and what is cleaned away (comments,
diffs, fix sections)."""

from __future__ import annotations

import json

import pytest

from bugbout.core.mine.issues import clean_problem_statement, problem_statement
from bugbout.core.store.records import Issue
from test_issue_sources import DATA

FENCE = "```"


def fenced(info: str, *lines: str, mark: str = FENCE) -> str:
    return "\n".join([mark + info, *lines, mark])


def test_html_comments_are_removed() -> None:
    text = (
        "<!-- Please fill in the template.\n"
        f"{fenced('python', 'paste code here')}\n"
        "-->\n"
        "Crash <!-- inline --> on start<!-- a --><!-- b -->.\n"
        "<!--\nmulti\nline\n-->\n"
        "End."
    )
    assert clean_problem_statement(text) == "Crash  on start.\n\nEnd."


def test_comments_inside_code_and_unclosed_comments_are_kept() -> None:
    code = fenced("html", "<!-- a real comment in an example -->", "<p>hi</p>")
    assert clean_problem_statement(code) == code
    assert clean_problem_statement("Before\n<!-- never closed\nafter") == (
        "Before\n<!-- never closed\nafter"
    )


@pytest.mark.parametrize(
    "block",
    [
        fenced("diff", "-    return int(x)", "+    return float(x)"),
        fenced("Diff", "@@ -1 +1 @@"),
        fenced("patch", "whatever", mark="~~~"),
        fenced("", "diff --git a/src/x.py b/src/x.py", "--- a/src/x.py", "+++ b/src/x.py"),
        fenced("text", "", "--- a/src/x.py", "+++ b/src/x.py"),
        fenced("", "+++ b/src/x.py"),
        "````diff\n```\nnested\n```\n````",
    ],
)
def test_diff_blocks_are_removed(block: str) -> None:
    text = f"The bug.\n\n{block}\n\nThe end."
    assert clean_problem_statement(text) == "The bug.\n\nThe end."


@pytest.mark.parametrize(
    "heading",
    [
        "## Solution",
        "### Proposed fix",
        "# Suggested Fix:",
        "## The fix ##",
        "#### What does this PR do?",
        "## What this PR does",
        "## **Changes made**",
        "###### how to fix",
        "## Implementation details",
    ],
)
def test_fix_sections_under_headings_are_removed(heading: str) -> None:
    level = heading.split(maxsplit=1)[0]
    text = (
        f"{level} Describe the bug\n\nIt breaks.\n\n"
        f"{heading}\n\nDo this.\n\n{level}# Detail\n\nstill the fix\n"
        f"{fenced('python', '# a comment, not a heading', 'x = 1')}\n\n"
        f"{level} Environment\n\nLinux"
    )
    assert clean_problem_statement(text) == (
        f"{level} Describe the bug\n\nIt breaks.\n\n{level} Environment\n\nLinux"
    )


def test_a_fix_section_runs_to_the_end_without_a_next_heading() -> None:
    text = "### Bug\nbad\n### Approach\nrewrite\n## Changes\nmore"
    assert clean_problem_statement(text) == "### Bug\nbad"


@pytest.mark.parametrize(
    "pseudo", ["**Solution**", "**Changes:**", "**Proposed changes**:", "__Approach__", "Solution:"]
)
def test_bold_and_colon_fix_sections_are_removed(pseudo: str) -> None:
    text = (
        f"**Describe the bug**\nIt breaks.\n\n{pseudo}\nDo this.\n\n"
        "**To reproduce**\nRun it.\n\n"
        f"{pseudo}\nAgain.\n\nSteps:\n1. run"
    )
    assert clean_problem_statement(text) == (
        "**Describe the bug**\nIt breaks.\n\n**To reproduce**\nRun it.\n\nSteps:\n1. run"
    )


def test_a_pseudo_heading_section_ends_at_any_heading() -> None:
    text = "Changes:\n- one\n#### Details\nkept"
    assert clean_problem_statement(text) == "#### Details\nkept"


def test_ordinary_text_and_code_are_kept_verbatim() -> None:
    code = fenced(
        "python",
        "## Solution",
        "def fix():",
        "",
        "",
        "",
        "    return 1  # **Changes**",
    )
    text = (
        "## Bug report\n"
        "The fix for #12 did not work; see `solution.py`.\n"
        "    indented code\n"
        "- **Changes**: a list item, not a heading\n"
        "**Solution** is a word in this sentence.\n"
        "Fix: not alone on its line\n"
        "```inline code``` in a paragraph\n"
        "#12 is not a heading\n\n"
        f"{code}\n"
        "~~~\n--- not a diff\n~~~"
    )
    assert clean_problem_statement(text) == text


def test_blank_lines_are_collapsed_and_ends_stripped() -> None:
    assert clean_problem_statement("\n\n  \nA\r\n\r\n\r\n\r\nB\n \n\t\n\nC\n\n") == "A\n\nB\n\nC"
    assert clean_problem_statement("") == ""
    assert clean_problem_statement("## Solution\nall of it") == ""


def test_recorded_issue_cleans_to_the_problem_alone() -> None:
    item = json.loads((DATA / "issue-12.json").read_text())
    issue = Issue(number=12, title=item["title"], body=item["body"])
    assert problem_statement(issue) == (
        "parse_size('1.5k') raises ValueError\n\n"
        "### Describe the bug\n\n"
        "`parse_size` rejects sizes with a decimal point:\n\n"
        "```python\n>>> parse_size('1.5k')\nValueError: invalid size '1.5k'\n```\n\n"
        "### Expected behaviour\n\n"
        "`1536`."
    )


def test_problem_statement_is_the_title_alone_when_the_body_is_empty() -> None:
    assert problem_statement(Issue(number=1, title="Crash", body="<!-- template -->\n")) == "Crash"
    assert problem_statement(Issue(number=1, title="Crash", body="It crashes.")) == (
        "Crash\n\nIt crashes."
    )
