"""Evidence follows the patch, not the settings: an attempt run again under the same
settings (its record removed, or ``--retry-failed``) is judged, scored and audited on its
new patch; the base run is reused by every later bout; jobs of a parallel sweep that
need the same evidence compute it once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from bugbout.bout import Bout, Project
from bugbout.core.store.verdict_records import Job
from one_bug import AGENTS, bugbout, write_agent

pytestmark = pytest.mark.slow

BROKEN = AGENTS["broken"]
GOOD = AGENTS["good"]
SLOW_FIX = GOOD.replace(
    "ordered = sorted(values)", "import time; time.sleep(2); ordered = sorted(values)"
)
"""The good fix, two seconds slow on every call."""
FAT_FIX = GOOD.replace(
    "ordered = sorted(values)", "blob = bytes(range(256)) * 1_562_500; ordered = sorted(values)"
)
"""The good fix, holding 400 MB on every call."""


def only(repo: Path, contestants: dict[str, list[str]], timeout: int = 60) -> None:
    """Race only ``contestants`` (name: command) in ``repo``'s bugbout.yaml."""
    config = json.loads((repo / "bugbout.yaml").read_text())
    config["contestants"] = {
        name: {"agent": "command", "command": command} for name, command in contestants.items()
    }
    config["run"]["timeout"] = timeout
    (repo / "bugbout.yaml").write_text(json.dumps(config))


def stored(repo: Path, name: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((repo / ".bugbout" / name).read_text())
    return found


def scores(repo: Path) -> dict[str, str]:
    (task,) = stored(repo, "resolutions.json").values()
    return {name: resolution["score"] for name, resolution in task["patches"].items()}


def resolved(repo: Path) -> dict[str, int]:
    return {row["contestant"]: row["resolved"] for row in stored(repo, "report.json")["agents"]}


def columns(repo: Path) -> list[str]:
    (matrix,) = (repo / ".bugbout" / "matrices").glob("*.json")
    patches: list[str] = json.loads(matrix.read_text())["patches"]
    return patches


def base_runs(repo: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in (repo / ".bugbout" / "evidence").glob("*/base-*")}


def test_an_agent_error_removed_and_run_again_is_judged_on_its_new_patch(
    bout_repo: Path, tmp_path: Path
) -> None:
    """The documented ``rm`` of an ``agent-error`` record: the agent runs again under the
    same settings, and its new patch is cross-examined, scored and audited, not the old
    one's evidence."""
    script = write_agent(tmp_path / "agents", "flaky", BROKEN)
    only(bout_repo, {"flaky": [sys.executable, str(script)]})
    first = bugbout("run", cwd=bout_repo)
    assert first.returncode == 0, first.stderr
    (record,) = (bout_repo / ".bugbout" / "attempts").glob("*/flaky/*.json")
    assert json.loads(record.read_text())["status"] == "agent-error"
    assert scores(bout_repo) == {"flaky": "no-fix"}

    record.unlink()
    write_agent(tmp_path / "agents", "flaky", GOOD)  # the same command, a working agent now
    again = bugbout("run", cwd=bout_repo)
    assert again.returncode == 0, again.stderr
    assert json.loads(record.read_text())["status"] == "finished"
    assert scores(bout_repo) == {"flaky": "resolved"}
    assert resolved(bout_repo) == {"flaky": 1}
    assert "flaky" in columns(bout_repo)  # a column for the new patch
    (audits,) = stored(bout_repo, "audits.json").values()
    assert audits["flaky"]["verdict"] == "resolved"


def test_retry_failed_after_an_infra_error_judges_the_new_patch(
    bout_repo: Path, tmp_path: Path
) -> None:
    """An agent whose program vanished mid-bout (``infra-error``), run again by
    ``--retry-failed`` once it is back: its new patch is what is scored."""
    program = tmp_path / "bin" / "agent"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\nsleep 4\nexit 1\n")
    program.chmod(0o755)
    only(bout_repo, {"agent": [str(program)]})
    process = subprocess.Popen(
        [sys.executable, "-m", "bugbout", "run", "environment=interpreter", "--quiet",
         "run.max-unscored=1"],
        cwd=bout_repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    home = Path(os.environ["BUGBOUT_HOME"])
    deadline = time.monotonic() + 300
    while not any((home / "attempts").glob("*/agent-*/logs/prompt.md")):
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.2)
    program.unlink()  # while the agent runs: the machine's doing
    _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    assert scores(bout_repo) == {"agent": "no-fix"}

    good = write_agent(tmp_path / "agents", "good", GOOD)
    program.write_text(f"#!/bin/sh\nexec {sys.executable} {good}\n")
    program.chmod(0o755)
    retried = bugbout("run", "--retry-failed", cwd=bout_repo)
    assert retried.returncode == 0, retried.stderr
    assert scores(bout_repo) == {"agent": "resolved"}
    assert resolved(bout_repo) == {"agent": 1}


def test_through_the_python_api_a_new_patch_is_judged_and_the_base_run_reused(
    bout_repo: Path, tmp_path: Path
) -> None:
    """``Bout.run`` twice on one store: the attempt removed and run again is scored on
    its new patch, and the task's base run is made by the first bout only."""
    script = write_agent(tmp_path / "agents", "flaky", BROKEN)
    only(bout_repo, {"flaky": [sys.executable, str(script)]})
    overrides = ["environment=interpreter"]
    result = Bout(Project.load(bout_repo, overrides)).run()
    assert result.report is not None and result.job is not None
    assert {row.contestant: row.resolved for row in result.report.agents} == {"flaky": 0}
    bases = base_runs(bout_repo)
    assert len(bases) == 1

    (used,) = result.job.attempts
    (bout_repo / ".bugbout" / used.path).unlink()
    write_agent(tmp_path / "agents", "flaky", GOOD)
    again = Bout(Project.load(bout_repo, overrides)).run()
    assert again.report is not None
    assert {row.contestant: row.resolved for row in again.report.agents} == {"flaky": 1}
    assert base_runs(bout_repo) == bases  # the first bout's, not made again


def test_a_later_bout_reuses_the_base_run(bout_repo: Path) -> None:
    """A second bout with another contestant cross-examines again, on the base run the
    first bout left in the store."""
    first = bugbout("run", "contestant=[good]", cwd=bout_repo)
    assert first.returncode == 0, first.stderr
    bases = base_runs(bout_repo)
    assert len(bases) == 1
    second = bugbout("run", "contestant=[good,empty]", cwd=bout_repo)
    assert second.returncode == 0, second.stderr
    assert set(columns(bout_repo)) == {"(unfixed)", "good"}  # a new matrix
    assert base_runs(bout_repo) == bases


def test_two_sweep_jobs_at_once_compute_each_piece_of_evidence_once(bout_repo: Path) -> None:
    """Two jobs at once (joblib, two workers) that differ only in the judge: whichever
    gets to a matrix, score, audit or base run first computes it, the other waits and
    reuses it."""
    pytest.importorskip("hydra_plugins.hydra_joblib_launcher")
    result = bugbout(
        "run", "-m", "contestant=[good,empty]", "judge=majority,strict",
        "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", cwd=bout_repo,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    jobs = sorted((bout_repo / ".bugbout" / "sweeps").glob("*/*/job.json"))
    first, second = (Job.model_validate_json(path.read_text()) for path in jobs)
    needed = first.evidence_made + first.evidence_reused
    assert needed == second.evidence_made + second.evidence_reused > 0
    assert first.evidence_made + second.evidence_made == needed
    assert len(base_runs(bout_repo)) == 1


def test_a_score_killed_at_the_timeout_is_made_again_under_a_longer_one(
    bout_repo: Path, tmp_path: Path
) -> None:
    """A correct but slow patch, scored with ``verdicts.timeout`` too short for it, is
    scored again when the timeout is raised, not left as it was."""
    script = write_agent(tmp_path / "agents", "slow", SLOW_FIX)
    only(bout_repo, {"slow": [sys.executable, str(script)]})
    short = bugbout("run", "verdicts.timeout=1", cwd=bout_repo)
    assert short.returncode == 0, short.stderr
    assert scores(bout_repo) == {"slow": "wrong-fix"}
    longer = bugbout("run", "verdicts.timeout=120", cwd=bout_repo)
    assert longer.returncode == 0, longer.stderr
    assert scores(bout_repo) == {"slow": "resolved"}


def test_evidence_made_under_other_test_limits_is_made_again(
    bout_repo: Path, tmp_path: Path
) -> None:
    """A correct patch that holds 400 MB is resolved under the default test limits; with
    ``limits.tests.memory`` below that, its score, the base run and the audit are made
    again (the run breaks the limit: not resolved), never read from the first bout."""
    script = write_agent(tmp_path / "agents", "fat", FAT_FIX)
    only(bout_repo, {"fat": [sys.executable, str(script)]})
    first = bugbout("run", cwd=bout_repo)
    assert first.returncode == 0, first.stderr
    assert scores(bout_repo) == {"fat": "resolved"}
    bases = base_runs(bout_repo)
    limited = bugbout("run", "limits.tests.memory=200000000", cwd=bout_repo)
    assert limited.returncode == 0, limited.stderr
    assert scores(bout_repo) == {"fat": "wrong-fix"}
    assert set(base_runs(bout_repo)) > set(bases)  # a base run of its own, beside the first


def test_through_the_python_api_retry_failed_after_a_quota_scores_the_new_patch(
    bout_repo: Path, tmp_path: Path
) -> None:
    """``run.retry-failed`` (``--retry-failed``) after an agent hit its usage limit: the
    agent runs again under the same settings and its new patch is scored."""
    script = write_agent(tmp_path / "agents", "capped", AGENTS["limited"])
    only(bout_repo, {"capped": [sys.executable, str(script)]})
    overrides = ["environment=interpreter", "run.max-unscored=1"]
    first = Bout(Project.load(bout_repo, overrides)).run()
    assert [a.status for a in first.attempts] == ["quota"]
    write_agent(tmp_path / "agents", "capped", GOOD)  # the limit has reset
    retried = Bout(Project.load(bout_repo, [*overrides, "run.retry-failed=true"])).run()
    assert [a.status for a in retried.attempts] == ["finished"]
    assert retried.report is not None
    assert {row.contestant: row.resolved for row in retried.report.agents} == {"capped": 1}


def test_through_the_python_api_two_jobs_at_once_compute_each_record_once(
    bout_repo: Path, tmp_path: Path
) -> None:
    """Two bouts of one sweep at once in threads, each with its own output and judge, on
    attempts already stored: each test run's record is computed by one of them."""
    overrides = ["environment=interpreter", "contestant=[good,empty]"]
    Bout(Project.load(bout_repo, overrides)).run()  # the attempts and the ground truth
    shutil.rmtree(bout_repo / ".bugbout" / "evidence")
    sweep = tmp_path / "sweep"
    bouts = [
        Bout(Project.load(bout_repo, [*overrides, f"judge={judge}"]), output=sweep / judge,
             sweep=sweep)
        for judge in ("majority", "strict")
    ]  # fmt: skip
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(Bout.run, bouts))
    jobs = [result.job for result in results]
    assert jobs[0] is not None and jobs[1] is not None
    needed = jobs[0].evidence_made + jobs[0].evidence_reused
    assert needed == jobs[1].evidence_made + jobs[1].evidence_reused > 0
    assert jobs[0].evidence_made + jobs[1].evidence_made == needed
