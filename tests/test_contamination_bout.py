"""How contaminated, through a whole bout: a scripted contestant that reproduces the
maintainers' fix verbatim is flagged recalled, one that writes the fix its own way is
not, and each resolve rate is split at the contestant's knowledge cutoff."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bugbout.config.layout import render_config
from bugbout.testing import build_fixed_bug_repository

BUGGY = "    return shape / reference\\n"
SCRIPTS = {
    # the maintainers' change, line for line
    "verbatim": "    if reference == 0:\\n        return 0.0\\n    return shape / reference\\n",
    # the same behaviour, written another way
    "rewritten": "    return shape / reference if reference else 0.0\\n",
}


def contestant(name: str, *extra: str) -> str:
    script = (
        "import pathlib; p = pathlib.Path('src/shapes/area.py'); "
        f"p.write_text(p.read_text().replace('{BUGGY}', '{SCRIPTS[name]}'))"
    )
    command = json.dumps([sys.executable, "-c", script])
    return f"  {name}: {{agent: command, command: {command}{''.join(extra)}}}"


@pytest.fixture(scope="module")
def bout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    fixed = build_fixed_bug_repository(tmp_path_factory.mktemp("recall") / "shapes")
    config = render_config([fixed.source], fixed.tests).replace(
        "  # - override environment: interpreter", "  - override environment: interpreter"
    )
    config += "\n".join([
        "issue-sources:",
        f"  file: {{path: {fixed.issues_file}}}",
        "contestants:",
        contestant("verbatim", ", knowledge-cutoff: 2023-01-01"),
        contestant("rewritten", ", model: gpt-5"),  # gpt-5's packaged cutoff: 2024-09-30
        "",
    ])  # fmt: skip
    (fixed.path / "bugbout.yaml").write_text(config)
    run(fixed.path)
    return fixed.path


def run(repo: Path, *overrides: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bugbout", "run", "auditor=recall", "verdicts.run-suite=false",
         *overrides],
        cwd=repo, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
def test_a_verbatim_fix_is_flagged_recalled_and_a_rewritten_one_is_not(bout: Path) -> None:
    report = json.loads((bout / ".bugbout" / "report.json").read_text())
    found = report["contamination"]
    assert found["resolved"] == 2
    similarity = {row["contestant"]: row["similarity"] for row in found["patches"]}
    assert similarity["verbatim"]["five_gram"] == similarity["verbatim"]["identical_lines"] == 1
    assert similarity["verbatim"]["recalled"] is True
    assert similarity["rewritten"]["five_gram"] < similarity["rewritten"]["threshold"]
    assert similarity["rewritten"]["recalled"] is False
    assert found["recalled"] == {"rewritten": 0, "verbatim": 1}


@pytest.mark.slow
def test_each_resolve_rate_is_split_at_the_contestants_cutoff(bout: Path) -> None:
    report = json.loads((bout / ".bugbout" / "report.json").read_text())
    found = report["contamination"]
    split = {row["contestant"]: row for row in found["cutoffs"]}
    # the fix was committed on 2023-11-15: after the declared cutoff, before gpt-5's
    verbatim, rewritten = split["verbatim"], split["rewritten"]
    assert (verbatim["cutoff"], verbatim["declared"]) == ("2023-01-01", True)
    assert (verbatim["after"]["resolved"], verbatim["after"]["tasks"]) == (1, 1)
    assert verbatim["before"]["tasks"] == 0
    assert (rewritten["cutoff"], rewritten["declared"]) == ("2024-09-30", False)
    assert rewritten["before"]["text"] == "1/1 (100%, 95% CI 21-100%)"
    assert found["warning"] is None  # the task is after one of the cutoffs
    markdown = (bout / ".bugbout" / "report.md").read_text()
    assert "## How contaminated" in markdown
    assert "| 2023-01-01 (declared) |" in markdown
    assert "recalled?" in markdown


@pytest.mark.slow
def test_a_cutoff_set_on_the_command_line_reruns_no_agent(bout: Path) -> None:
    run(bout, "contestant.verbatim.knowledge-cutoff=2025-01-01")
    job = json.loads((bout / ".bugbout" / "job.json").read_text())
    assert job["cutoffs"] == {"verbatim": "2025-01-01"}
    assert all(attempt["reused"] for attempt in job["attempts"])
    warning = json.loads((bout / ".bugbout" / "report.json").read_text())["contamination"][
        "warning"
    ]
    assert warning.startswith("1 of 1 scored tasks were fixed on or before every")
    assert "miner.since: 2025-01-01" in warning


@pytest.mark.slow
def test_a_fix_smaller_than_min_lines_is_measured_never_flagged(bout: Path) -> None:
    """The fix adds two lines; with ``auditor.min-lines=3`` even the verbatim copy is
    not flagged (a one-line fix, under the default 2, never is)."""
    run(bout, "auditor.min-lines=3")
    found = json.loads((bout / ".bugbout" / "report.json").read_text())["contamination"]
    similarity = {row["contestant"]: row["similarity"] for row in found["patches"]}
    assert similarity["verbatim"]["five_gram"] == 1
    assert similarity["verbatim"]["recalled"] is False
    assert found["recalled"] == {"rewritten": 0, "verbatim": 0}
