"""`bugbout init`'s own example contestant starts when a user follows it: uncommented,
with the program it names installed, its attempt runs inside the sandbox."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from cli_runs import bugbout
from one_bug import attempts, one_bug_repository


@pytest.mark.slow
def test_the_example_contestant_starts_inside_the_sandbox(tmp_path: Path) -> None:
    repo = one_bug_repository(tmp_path / "repo").path
    only_git = tmp_path / "only-git"
    only_git.mkdir()
    (only_git / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    keys = dict.fromkeys(
        ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"), ""
    )
    made = bugbout("init", cwd=repo, env={"PATH": str(only_git), **keys})
    assert made.returncode == 0, made.stderr
    lines = (repo / "bugbout.yaml").read_text().splitlines()
    (example,) = [line for line in lines if line.startswith("#   mine: ")]
    config = yaml.safe_load("\n".join(line for line in lines if not line.startswith("#")))
    config["contestants"] = yaml.safe_load(example.removeprefix("# "))
    config["issue-sources"] = {"github": None, "file": None}
    (repo / "bugbout.yaml").write_text(json.dumps(config))

    program = config["contestants"]["mine"]["command"][0]  # install what the example names
    programs = tmp_path / "programs"
    programs.mkdir()
    where = repo / program if "/" in program else programs / program
    where.write_text("#!/bin/sh\necho 'my agent ran'\n")
    where.chmod(0o755)
    path = f"{programs}{os.pathsep}{os.environ['PATH']}"
    ran = bugbout("run", "environment=interpreter", cwd=repo, env={"PATH": path, **keys})
    assert ran.returncode == 0, ran.stdout + ran.stderr
    mine = attempts(repo)["mine"]
    assert mine["status"] == "finished", mine
    assert "my agent ran" in (Path(mine["logdir"]) / "stdout.log").read_text()
