"""``bugbout init`` and ``bugbout demo`` end to end: the layout found, the config written, the
first tasks mined."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from bugbout.config import compose_settings
from bugbout.config.layout import detect_tests, find_packages
from cli_runs import bugbout


@pytest.mark.slow
def test_init_finds_the_layout_and_writes_a_commented_config(repo: Path) -> None:
    result = bugbout("init", cwd=repo / "src")
    assert result.returncode == 0, result.stderr
    config = (repo / "bugbout.yaml").read_text()
    assert "  source: src/calc" in config
    assert "  tests: tests" in config
    assert "# " in config
    again = bugbout("init", cwd=repo)
    assert again.returncode == 2
    assert again.stderr.strip().splitlines() == [
        f"error: {repo / 'bugbout.yaml'} already exists; pass --force to overwrite it"
    ]
    assert bugbout("init", "--force", cwd=repo).returncode == 0


@pytest.mark.slow
def test_init_says_how_to_keep_a_bout_short_on_a_large_suite(initialised: Path) -> None:
    repo = initialised
    assert "Note:" not in (repo / "bugbout.yaml").read_text()  # a small suite
    cases = ", ".join(str(case) for case in range(100))
    module = "".join(
        f"@pytest.mark.parametrize('x', [{cases}])\ndef test_{number}(x):\n    pass\n"
        for number in range(25)
    )
    (repo / "tests" / "test_big.py").write_text(f"import pytest\n{module}")
    result = bugbout("init", "--force", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert "note: the tests define at least 2,5" in result.stderr
    assert "`verdicts.run-suite: false`" in result.stderr
    config = (repo / "bugbout.yaml").read_text()
    assert config.startswith("# Note: the tests define at least 2,5")
    chosen = bugbout("tasks", "--cfg", "job", cwd=repo)
    assert chosen.returncode == 0, chosen.stderr


def test_init_refuses_a_directory_that_is_not_a_repository(tmp_path: Path) -> None:
    result = bugbout("init", cwd=tmp_path, env={"GIT_CEILING_DIRECTORIES": str(tmp_path)})
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"error: {tmp_path} is not a git repository: bugbout replays the fixes in a "
        "repository's history; run `bugbout init` in a clone of your project"
    )
    assert not (tmp_path / "bugbout.yaml").exists()


@pytest.mark.slow
def test_init_races_the_agents_installed_here(repo: Path, tmp_path: Path) -> None:
    """An agent whose program is installed and whose key is set is a contestant; the
    others are written commented out, with what they lack."""
    programs = tmp_path / "bin"
    programs.mkdir()
    (programs / "codex").write_text("#!/bin/sh\necho codex-cli 1.0\n")
    (programs / "codex").chmod(0o755)
    (programs / "claude").write_text("#!/bin/sh\n")
    (programs / "claude").chmod(0o755)
    (programs / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    env = {"PATH": str(programs), "OPENAI_API_KEY": "sk-test"}
    for variable in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        env[variable] = ""
    result = bugbout("init", cwd=repo, env=env)
    assert result.returncode == 0, result.stderr
    assert "contestants: my-codex)" in result.stderr
    config = (repo / "bugbout.yaml").read_text()
    assert "\ncontestants:\n" in config
    assert "\n  my-codex: {agent: codex}\n" in config
    assert "  # my-claude-code: {agent: claude-code}   # ANTHROPIC_API_KEY is not set" in config
    assert "  # my-gemini-cli: {agent: gemini-cli}   # `gemini` is not installed" in config
    shown = bugbout("tasks", "--cfg", "job", cwd=repo, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "\ncontestants:\n  my-codex:\n    agent: codex\n" in shown.stdout
    settings, _ = compose_settings(repo)  # none chosen: the core races every defined one
    assert settings.chosen("contestant") == {"my-codex": {"agent": "codex"}}


def test_layout_detection(tmp_path: Path) -> None:
    files = [
        "docs/__init__.py", "alpha/__init__.py", "mypkg/__init__.py", "mypkg/sub/__init__.py",
        "src/beta/__init__.py", ".hidden/__init__.py", "tests/helpers/__init__.py",
    ]  # fmt: skip
    assert find_packages(files) == ["src/beta", "alpha", "mypkg"]
    (tmp_path / "mypkg" / "tests").mkdir(parents=True)
    assert detect_tests(tmp_path, "mypkg") == "mypkg/tests"


@pytest.mark.slow
def test_init_then_tasks_with_the_default_environment(initialised: Path) -> None:
    """The default uv environment, built for real, gives the same ground truth."""
    result = bugbout("tasks", "miner.limit=3", cwd=initialised)
    assert result.returncode == 0, result.stderr
    tasks = json.loads((initialised / ".bugbout" / "tasks.json").read_text())
    oracles = json.loads((initialised / ".bugbout" / "oracles.json").read_text())
    assert tasks["examined"] == 13
    assert tasks["excluded"]["over-limit"] == 6
    assert [task["issue"]["number"] for task in tasks["tasks"]] == [11, 10, 9]
    assert set(tasks["tasks"][0]) >= {
        "id", "sha", "parent", "date", "title", "issue", "problem_statement",
        "source_files", "test_files", "scored", "reason",
    }  # fmt: skip
    parametrize = oracles[tasks["tasks"][1]["id"]]
    assert parametrize["status"] == "ok"
    assert parametrize["fail_to_pass"] == ["tests/test_clamp.py::test_clamp[11-10]"]
    assert parametrize["environment"].startswith("uv: Python 3.12")
    assert "3 tasks from 13 commits" in result.stdout
    assert (initialised / ".bugbout" / ".gitignore").read_text().strip().endswith("*")
    status = subprocess.run(
        ["git", "status", "--porcelain"],
        cwd=initialised,
        capture_output=True,
        text=True,
        check=True,
    )
    assert ".bugbout" not in status.stdout


@pytest.mark.slow
def test_demo_builds_the_example_and_mines_it(tmp_path: Path) -> None:
    result = bugbout("demo", str(tmp_path / "demo"), "environment=interpreter", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    tasks = json.loads((tmp_path / "demo" / ".bugbout" / "tasks.json").read_text())
    assert [task["issue"]["number"] for task in tasks["tasks"]] == [8, 5, 3]
    assert tasks["tasks"][2]["problem_statement"].startswith("median() is wrong")
    assert "Proposed fix" not in tasks["tasks"][2]["problem_statement"]
    assert all(task["scored"] for task in tasks["tasks"])
    again = bugbout("demo", str(tmp_path / "demo"), "environment=interpreter", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "resuming the demo bout" in again.stderr
    assert "no new attempts" in again.stdout
