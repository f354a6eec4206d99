"""The example repository behind ``bugbout demo``: a small package with a real history
of fixed bugs, built as a git repository on demand (no network needed)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bugbout.config.layout import render_config
from bugbout.testing.repository import RepositoryBuilder

PYPROJECT = """\
[project]
name = "tally"
version = "1.0.0"
requires-python = ">=3.9"
dependencies = []

[tool.pytest.ini_options]
addopts = "--cov=tally"
"""

STATS_V1 = '''\
"""Small statistics helpers."""


def mean(values):
    return sum(values) / len(values)


def median(values):
    ordered = sorted(values)
    return ordered[len(ordered) // 2]
'''

STATS_V2 = STATS_V1.replace(
    "    return ordered[len(ordered) // 2]\n",
    "    middle = len(ordered) // 2\n"
    "    if len(ordered) % 2 == 0:\n"
    "        return (ordered[middle - 1] + ordered[middle]) / 2\n"
    "    return ordered[middle]\n",
)

STATS_V3 = STATS_V2.replace(
    "def mean(values):\n    return",
    "def mean(values):\n"
    "    if not values:\n"
    '        raise ValueError("mean() of an empty sequence")\n'
    "    return",
)

PARSE_V1 = '''\
"""Reading numbers from text."""


def parse_number(text):
    text = text.strip().replace(",", "")
    if text.startswith("-"):
        return float(text[1:])
    return float(text)
'''

PARSE_V2 = PARSE_V1.replace('    if text.startswith("-"):\n        return float(text[1:])\n', "")

TEST_STATS_V1 = """\
from tally.stats import mean, median


def test_mean():
    assert mean([1, 2, 3]) == 2


def test_median_odd():
    assert median([3, 1, 2]) == 2
"""

TEST_STATS_V2 = (
    TEST_STATS_V1
    + """

def test_median_even():
    assert median([4, 1, 3, 2]) == 2.5
"""
)

TEST_STATS_V3 = (
    TEST_STATS_V2
    + """

def test_mean_of_nothing_is_an_error():
    import pytest

    with pytest.raises(ValueError):
        mean([])
"""
)

TEST_PARSE_V1 = """\
import pytest

from tally.parse import parse_number


@pytest.mark.parametrize("text, expected", [("1", 1.0), ("1,000", 1000.0)])
def test_parse_number(text, expected):
    assert parse_number(text) == expected
"""

TEST_PARSE_V2 = TEST_PARSE_V1.replace(
    '[("1", 1.0), ("1,000", 1000.0)]', '[("1", 1.0), ("1,000", 1000.0), ("-2.5", -2.5)]'
)

ISSUES = [
    {"number": 3, "title": "median() is wrong for lists of even length",
     "body": "`median([4, 1, 3, 2])` returns 3, but the median is 2.5.\n\n"
             "## Proposed fix\nAverage the two middle values."},
    {"number": 5, "title": "mean([]) crashes with ZeroDivisionError",
     "body": "Calling `mean([])` raises ZeroDivisionError; it should raise a ValueError "
             "that says the sequence is empty."},
    {"number": 8, "title": "Negative numbers lose their sign",
     "body": "`parse_number('-2.5')` returns 2.5.\n<!-- triage: confirmed -->"},
    {"number": 9, "title": "Typo in the README", "body": "'statistcs'"},
]  # fmt: skip


def build_example(path: Path) -> Path:
    """Build the example repository at ``path`` with its ``bugbout.yaml`` (scripted
    contestants and examiner, tests run by this interpreter); returns ``path``."""
    repo = RepositoryBuilder(path)
    repo.commit(
        "Initial version of tally",
        {
            "pyproject.toml": PYPROJECT,
            "README.md": "# tally\n\nSmall statistcs helpers.\n",
            "src/tally/__init__.py": '"""tally: small statistics helpers."""\n',
            "src/tally/stats.py": STATS_V1,
            "src/tally/parse.py": PARSE_V1,
            "tests/test_stats.py": TEST_STATS_V1,
            "tests/test_parse.py": TEST_PARSE_V1,
        },
    )
    repo.commit(
        "Fix median of even-length lists (#3)",
        {"src/tally/stats.py": STATS_V2, "tests/test_stats.py": TEST_STATS_V2},
    )
    repo.commit("Add a changelog", {"CHANGELOG.md": "# Changelog\n"})
    repo.commit(
        "Raise ValueError instead of a crash on empty input\n\nFixes #5",
        {"src/tally/stats.py": STATS_V3, "tests/test_stats.py": TEST_STATS_V3},
    )
    repo.branch("negative-numbers")
    repo.commit(
        "Keep the sign of negative numbers",
        {"src/tally/parse.py": PARSE_V2, "tests/test_parse.py": TEST_PARSE_V2},
    )
    repo.switch("main")
    repo.merge(
        "negative-numbers",
        "Merge pull request #8 from dev/negative-numbers\n\nNegative numbers were parsed wrong",
    )
    repo.commit(
        "Fix typo in the README (#9)",
        {"README.md": "# tally\n\nSmall statistics helpers.\n"},
    )
    (path / "issues.jsonl").write_text("".join(json.dumps(issue) + "\n" for issue in ISSUES))
    config = (
        render_config(["src/tally"], "tests")
        .replace(
            "# issue-sources:          # asked in order: github, file, commit; `github: null` "
            "removes one\n#   file: {path: issues.jsonl}",
            "issue-sources:\n  file: {path: issues.jsonl}",
        )
        .replace("  # - override environment: interpreter", "  - override environment: interpreter")
    )
    (path / "bugbout.yaml").write_text(config + demo_settings())
    return path


def demo_settings(agents: str = "bugbout.example.agents") -> str:
    """Scripted contestants and an examiner (no model, no network): the roles of the
    module ``agents``. For the Python example, its tests are run by the interpreter
    bugbout runs on, so the demo needs nothing from the internet."""
    python = json.dumps(sys.executable)
    lines = ["", f"# The demo's scripted agents (python -m {agents} ROLE).", "contestants:"]
    for role in ("correct", "wrong", "breaking", "empty"):
        lines.append(f"  {role}: {{agent: command, command: [{python}, -m, {agents}, {role}]}}")
    lines += [
        "examiners:",
        f"  reproducer: {{agent: command, assignment: reproduce, "
        f"command: [{python}, -m, {agents}, examiner]}}",
        "",
    ]
    return "\n".join(lines)
