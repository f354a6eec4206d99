"""The command line end to end, in fresh repositories, as a user runs it: mining only, a
corrupt record, GitHub offline."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import history
from cli_runs import bugbout


def test_mine_only_writes_the_tasks_without_ground_truth(initialised: Path) -> None:
    result = bugbout("tasks", "--mine-only", "miner.limit=2", cwd=initialised)
    assert result.returncode == 0, result.stderr
    store = initialised / ".bugbout"
    tasks = json.loads((store / "tasks.json").read_text())
    assert len(tasks["tasks"]) == 2
    assert not (store / "oracles.json").exists()
    assert "not computed" in result.stdout
    assert f"wrote {store / 'tasks.json'}\n" in result.stderr


def test_corrupt_record_is_reported_and_kept(initialised: Path) -> None:
    store = initialised / ".bugbout"
    store.mkdir()
    (store / "oracles.json").write_text('{"abc": {"status": "maybe"}}')
    result = bugbout("tasks", "environment=interpreter", "~issue-sources.github", cwd=initialised)
    assert result.returncode == 2
    assert "oracles.json is corrupt" in result.stderr
    assert "move it aside" in result.stderr
    assert (store / "oracles.json").read_text() == '{"abc": {"status": "maybe"}}'


def test_history_fixture_is_consistent() -> None:
    assert len(history.EXPECTED_ORDER) == 9


@pytest.mark.slow
def test_offline_github_fails_over_with_one_warning(initialised: Path) -> None:
    subprocess.run(
        ["git", "remote", "add", "origin", "https://github.com/calc/calc.git"],
        cwd=initialised,
        check=True,
    )
    with (initialised / "bugbout.yaml").open("a") as config:
        config.write("issue-sources:\n  github: {api-url: 'http://127.0.0.1:9', timeout: 2}\n")
    result = bugbout("tasks", "environment=interpreter", "miner.limit=2", cwd=initialised)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1
    assert "github" in warnings[0]
    tasks = json.loads((initialised / ".bugbout" / "tasks.json").read_text())
    task = tasks["tasks"][0]  # no source knew #11: told as a fix without an issue
    assert task["issue"]["source"] == "commit"
    assert task["problem_statement"].startswith("Fix a regression in fmt\n\nTests written")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["init", "--bogus"],
            "error: bugbout init: unrecognized arguments: --bogus; see `bugbout init --help`",
        ),
        (
            ["report", "--sweep"],
            "error: bugbout report: argument --sweep: expected one argument; "
            "see `bugbout report --help`",
        ),
    ],
)
def test_a_subcommands_usage_error_is_one_line(
    tmp_path: Path, args: list[str], message: str
) -> None:
    result = bugbout(*args, cwd=tmp_path)
    assert (result.returncode, result.stderr.strip()) == (2, message)
