"""Attempts spread over workers: quotas hold across them, Ray workers run them, and a program
that vanishes mid-bout is the machine's error."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from one_bug import attempts, bugbout, write_agent


def _interval(attempt: dict) -> tuple[float, float]:
    """When an attempt's agent started (its prompt written) and ended (its output closed)."""
    logs = Path(attempt["logdir"])
    return (logs / "prompt.md").stat().st_mtime, (logs / "stdout.log").stat().st_mtime


def _overlaps(intervals: list[tuple[float, float]]) -> bool:
    ordered = sorted(intervals)
    return any(later[0] < earlier[1] for earlier, later in itertools.pairwise(ordered))


@pytest.mark.slow
def test_a_quota_holds_however_many_workers_the_executor_has(bout_repo: Path) -> None:
    config = json.loads((bout_repo / "bugbout.yaml").read_text())
    nap = "import time\ntime.sleep(1)\n"
    agents = bout_repo.parent / "agents"
    config["contestants"] = {
        name: {"agent": "command", "command": [sys.executable, str(write_agent(agents, name, nap))]}
        for name in ("nap1", "nap2", "nap3")
    }
    config["run"] = {"timeout": 60, "quotas": {"command": 1}}
    (bout_repo / "bugbout.yaml").write_text(json.dumps(config))

    alone = bugbout("run", "executor.workers=8", "verdicts.run-suite=false", cwd=bout_repo)
    assert alone.returncode == 0, alone.stderr
    assert not _overlaps([_interval(a) for a in attempts(bout_repo).values()])

    subprocess.run(["rm", "-rf", str(bout_repo / ".bugbout")], check=True)
    wide = bugbout(
        "run", "executor.workers=8", "run.quotas.command=3", "verdicts.run-suite=false",
        cwd=bout_repo,
    )  # fmt: skip
    assert wide.returncode == 0, wide.stderr
    assert _overlaps([_interval(a) for a in attempts(bout_repo).values()])


@pytest.mark.slow
def test_attempts_run_in_ray_workers(bout_repo: Path) -> None:
    result = bugbout(
        "run", "executor=ray", "executor.num-cpus=2", "contestant=[good,empty]",
        "verdicts.run-suite=false", cwd=bout_repo,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    found = attempts(bout_repo)
    assert {name: a["status"] for name, a in found.items()} == {
        "good": "finished",
        "empty": "finished",
    }
    assert [f["path"] for f in found["good"]["patch"]["files"]] == [
        "src/mid/core.py",
        "tests/test_regression.py",
    ]
    # the verdicts' test runs ran in Ray workers too: the good patch resolves the task
    (scores,) = json.loads((bout_repo / ".bugbout" / "resolutions.json").read_text()).values()
    assert {name: s["score"] for name, s in scores["patches"].items()} == {
        "good": "resolved",
        "empty": "no-fix",
    }
    again = bugbout("run", "executor=ray", "contestant=[good,empty]", cwd=bout_repo)
    assert again.returncode == 0, again.stderr
    assert "reused 2 attempt(s) from the store" in again.stderr


@pytest.mark.slow
def test_a_program_that_vanishes_mid_bout_is_infra_error(bout_repo: Path, tmp_path: Path) -> None:
    """The machine's doing, not the agent's: never scored, and --retry-failed runs it
    again, whatever kind of agent it is."""
    program = tmp_path / "bin" / "vanishing"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\nsleep 4\nexit 1\n")
    program.chmod(0o755)
    config = json.loads((bout_repo / "bugbout.yaml").read_text())
    config["contestants"] = {"vanishing": {"agent": "command", "command": [str(program)]}}
    config["run"]["timeout"] = 60
    (bout_repo / "bugbout.yaml").write_text(json.dumps(config))
    process = subprocess.Popen(
        [sys.executable, "-m", "bugbout", "run", "environment=interpreter", "--quiet",
         "run.max-unscored=1"],  # its only attempt is unscored: the bout would fail
        cwd=bout_repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 300
    while not _started("vanishing"):
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.2)
    program.unlink()  # while the agent runs
    _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    record = attempts(bout_repo)["vanishing"]
    assert record["status"] == "infra-error"
    assert record["error"] == f"its program {str(program)!r} is no longer installed"


def _started(contestant: str) -> bool:
    """Whether an attempt of ``contestant`` has its prompt written (its agent starts)."""
    home = Path(os.environ["BUGBOUT_HOME"])
    return any((home / "attempts").glob(f"*/{contestant}-*/logs/prompt.md"))
