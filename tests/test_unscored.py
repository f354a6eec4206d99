"""An agent that cannot start inside the sandbox is the setup's failure, not the agent's:
its attempts are `infra-error` (never started), left unscored, the report says so at
the top, and past `run.max-unscored` the bout fails with one line; a cost per resolved
bug charges only what was spent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bugbout.bout import Bout, Project, UnscoredBout
from bugbout.core.contract.settings import PriceSettings
from bugbout.core.race.never_ran import never_ran
from bugbout.core.report.costs import price_table
from bugbout.core.report.report_store import load_report
from bugbout.core.store.race_records import AttemptStatus, Score
from bugbout.core.store.store import Store
from one_bug import attempts, bugbout, one_bug_repository
from stored_bouts import store_bout, task_ids

HIDDEN = "#!/bin/sh\necho 'fixing'\n"
HIDDEN_PY = "print('fixing')\n"


def _hidden_script_repo(tmp_path: Path) -> Path:
    """The one-bug repository with two contestants whose script lives where the sandbox
    hides it (the store, like a script in HOME), run by python3 and by bash."""
    repo = one_bug_repository(tmp_path / "repo").path
    script = repo / ".bugbout" / "tools" / "fix.sh"
    script.parent.mkdir(parents=True)
    script.write_text(HIDDEN)
    script.chmod(0o755)
    (script.parent / "fix.py").write_text(HIDDEN_PY)
    config = {
        "defaults": ["base", "_self_"],
        "project": {"source": "src/mid", "tests": "tests"},
        "issue-sources": {"github": None, "file": None},
        "run": {"timeout": 20},
        "contestants": {
            "alpha": {"agent": "command", "command": ["python3", str(script.parent / "fix.py")]},
            "beta": {"agent": "command", "command": ["bash", str(script)]},
        },
    }
    (repo / "bugbout.yaml").write_text(json.dumps(config))
    return repo


@pytest.mark.slow
def test_an_agent_that_cannot_start_in_the_sandbox_is_unscored_and_fails_the_bout(
    tmp_path: Path,
) -> None:
    repo = _hidden_script_repo(tmp_path)
    ran = bugbout("run", cwd=repo)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    errors = [line for line in ran.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == 1, ran.stderr
    assert "2 of 2 attempts (100%) were not scored, more than run.max-unscored=0.5" in errors[0]
    assert "the agent never started" in errors[0]

    found = attempts(repo)
    for name in ("alpha", "beta"):
        assert found[name]["status"] == "infra-error", found[name]
        assert found[name]["error"].startswith("the agent never started (exit status"), found
    report = (repo / ".bugbout" / "report.md").read_text()
    lines = report.splitlines()[1:]  # under the title and the decision's heading
    first = next(line for line in lines if line.strip() and not line.startswith("## "))
    assert first.startswith("**Warning: Not scored: 2 of 2 attempts (100%); infra-error 2")
    assert "No agent was scored on any task: alpha and beta had every attempt left out." in report
    assert "tie at 0/" not in report

    allowed = bugbout("run", "run.max-unscored=1", cwd=repo)
    assert allowed.returncode == 0, allowed.stderr


@pytest.mark.slow
def test_from_python_the_bout_raises_with_its_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _hidden_script_repo(tmp_path)
    monkeypatch.chdir(repo)
    bout = Bout(Project.load(repo, ["environment=interpreter"]))
    with pytest.raises(UnscoredBout, match=r"run.max-unscored=0.5") as raised:
        bout.run()
    report = raised.value.result.report
    assert report is not None
    assert (report.unscored.attempts, report.unscored.unscored) == (2, 2)
    assert report.unscored.statuses == {"infra-error": 2}
    assert [row.scored for row in report.agents] == [0, 0]
    assert load_report(Store(repo / ".bugbout")).unscored == report.unscored


@pytest.mark.parametrize(
    ("exit_code", "first", "last", "never"),
    [
        (127, "fix.sh: 2: node: not found", None, True),
        (126, "bash: ./fix.sh: Permission denied", None, True),
        (1, "bwrap: execvp ./fix.sh: No such file or directory", None, True),
        (2, "python3: can't open file '/home/me/fix.py': [Errno 2] No such file", None, True),
        (2, "usage: fix [-h]", "fix: error: unrecognized arguments", False),
        (1, "Traceback (most recent call last):", "ModuleNotFoundError: No module named 'x'", True),
        (1, "something went wrong", "something went wrong", False),
        (3, "bwrap: odd", None, False),
        (0, None, None, False),
        (None, None, None, False),
    ],
)
def test_which_exits_mean_the_agent_never_ran(
    exit_code: int | None, first: str | None, last: str | None, never: bool
) -> None:
    assert bool(never_ran(exit_code, first, last or first, left_nothing=True)) == never
    assert never_ran(exit_code, first, last or first, left_nothing=False) is None


def test_cost_per_resolved_bug_charges_only_what_was_spent(tmp_path: Path) -> None:
    """Two attempts ran and cost 0.032 each; eight never started and spent nothing. One
    bug resolved: 0.064 per resolved bug, not the average price times ten attempts."""
    ids = task_ids(10)
    outcomes: dict[str, dict[str, Score | AttemptStatus]] = {
        "alpha": {t: AttemptStatus.INFRA_ERROR for t in ids[2:]}
    }
    outcomes["alpha"] |= {ids[0]: Score.RESOLVED, ids[1]: Score.WRONG_FIX}
    spent = {"input_tokens": 1000, "output_tokens": 2000}  # at $2 and $15 per million: 0.032
    store_bout(tmp_path, outcomes, usage={"alpha": {ids[0]: spent, ids[1]: spent}})
    config = tmp_path / "bugbout.yaml"
    config.write_text(
        config.read_text() + "prices:\n  mine: {model: 'alpha-model', input: 2, output: 15}\n"
    )
    ran = bugbout("report", "--format", "json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    (row,) = json.loads(ran.stdout)["costs"]["agents"]
    assert row["cost"] == pytest.approx(0.064)
    assert (row["attempts"], row["charged"]) == (10, 2)
    assert row["cost_per_resolved"] == pytest.approx(0.064)
    mine = PriceSettings(model="alpha-model", input=2, output=15)
    report = load_report(Store(tmp_path / ".bugbout"), prices=price_table({"mine": mine}))
    assert report.costs.agents[0].cost_per_resolved == pytest.approx(0.064)
    assert report.unscored.warning is not None and "8 of 10" in report.unscored.warning
