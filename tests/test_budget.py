"""``run.budget``: once the attempts a run started have spent the budget (USD at the
prices, or tokens) no attempt starts; those left are recorded as not run, the report
says so, and the next run runs them. Real bouts through the command line, with an agent
plugin whose scripted runs report token usage."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bugbout.core.contract.settings import BudgetSettings
from bugbout.core.plumbing.models.budget import Budget, not_run_reason
from bugbout.core.plumbing.models.prices import price_table
from bugbout.core.report.costs import costs as report_costs
from bugbout.core.report.unscored import unscored
from bugbout.core.store.race_records import Attempt, AttemptStatus
from cli_runs import bugbout
from one_bug import one_bug_repository, write_agent
from plugin_sites import install_distribution

METERED = """
import re

from bugbout import AgentPlugin, hookimpl
from bugbout.core.race.agents import read_untrusted, usage_tokens
from bugbout.plugins.agents.command import CommandAgent, CommandOptions


class MeteredAgent(CommandAgent):
    harness = "metered"

    def parse(self, logdir):
        text = read_untrusted(logdir / "stdout.log") or ""
        found = re.search(r"tokens (\\d+) (\\d+)", text)
        usage = usage_tokens(fresh=int(found[1]), output=int(found[2])) if found else {}
        return text.strip(), usage


@hookimpl
def bugbout_agents():
    yield AgentPlugin(name="metered", factory=MeteredAgent.from_options,
                      options=CommandOptions, description="a command that reports its tokens")
"""
"""A ``command`` agent that reads its usage from ``tokens INPUT OUTPUT`` on its output."""

SPENDER = 'print("I looked and changed nothing. tokens 60 40")\n'
"""Each attempt: 100 tokens, $0.10 at $1000 per million."""


def metered_repository(root: Path, site: Path) -> Path:
    """The one-bug repository raced by four contestants a..d that spend 100 tokens each."""
    install_distribution(site, "bugbout-metered", "1.0", {"metered": "bugbout_metered"},
                         {"bugbout_metered": METERED})  # fmt: skip
    repo = one_bug_repository(root / "repo").path
    command = [sys.executable, str(write_agent(root, "spender", SPENDER))]
    config = {
        "defaults": ["base", "_self_"],
        "project": {"source": "src/mid", "tests": "tests"},
        "issue-sources": {"github": None, "file": None},
        "run": {"timeout": 30},
        "prices": {"scripted": {"model": "scripted-*", "input": 1000, "output": 1000}},
        "contestants": {
            name: {"agent": "metered", "model": "scripted-1", "command": command} for name in "abcd"
        },
    }
    (repo / "bugbout.yaml").write_text(json.dumps(config))
    return repo


def stored(repo: Path) -> dict[str, dict]:
    (task,) = list((repo / ".bugbout" / "attempts").iterdir())
    return {path.parent.name: json.loads(path.read_text()) for path in task.glob("*/*.json")}


def costs(repo: Path) -> dict:
    return json.loads((repo / ".bugbout" / "report.json").read_text())["costs"]


@pytest.mark.slow
def test_a_budget_stops_starting_attempts_and_the_next_run_runs_the_rest(
    tmp_path: Path, site: Path
) -> None:
    repo = metered_repository(tmp_path, site)

    # 3 of 4 attempts not run: more than run.max-unscored, yet not the setup's failure
    first = bugbout("run", "environment=interpreter", "run.budget.tokens=50", cwd=repo)
    assert first.returncode == 0, first.stderr
    attempts = stored(repo)
    assert {name: a["status"] for name, a in attempts.items()} == {
        "a": "finished", "b": "interrupted", "c": "interrupted", "d": "interrupted",
    }  # fmt: skip
    reason = "run.budget.tokens=50 reached ($0.10 and 100 tokens spent)"
    assert attempts["c"]["error"].startswith(f"not run: the budget {reason};")
    assert costs(repo)["not_run"] == 3 and costs(repo)["budget"] == reason
    assert costs(repo)["cost"] == pytest.approx(0.1)  # the attempts not run cost nothing
    shown = " ".join(first.stdout.split())  # as the terminal's width wraps it
    assert f"The budget stopped the bout: {reason}; 3 attempt(s) not run" in shown

    planned = bugbout("run", "--dry-run", cwd=repo).stdout.splitlines()
    assert planned[0].endswith("= 4 attempt(s); 1 in the store (reused, free), 3 to run")
    assert "  a (contestant, scripted-1): 0 to run, 1 reused; 100 tokens per attempt (mean " \
        "of 1 past attempt(s)), $0.100 each, $0.00 in all" in planned  # fmt: skip
    assert "  c (contestant, scripted-1): 1 to run, 0 reused; no tokens (no past attempt " \
        "with token usage), cost unknown" in planned  # fmt: skip

    second = bugbout("run", "environment=interpreter", "run.budget.usd=0.15", cwd=repo)
    assert second.returncode == 0, second.stderr
    attempts = stored(repo)
    assert (attempts["c"]["status"], attempts["d"]["status"]) == ("finished", "interrupted")
    reason = "run.budget.usd=0.15 reached ($0.20 and 200 tokens spent)"
    assert costs(repo)["not_run"] == 1 and costs(repo)["budget"] == reason

    third = bugbout("run", "environment=interpreter", cwd=repo)
    assert third.returncode == 0, third.stderr
    assert {a["status"] for a in stored(repo).values()} == {"finished"}
    assert costs(repo)["not_run"] == 0 and costs(repo)["budget"] is None
    assert costs(repo)["cost"] == pytest.approx(0.4)
    assert "The budget stopped" not in third.stdout


def test_attempts_the_budget_kept_from_starting_are_neither_unscored_nor_costed() -> None:
    """Unit-level: the report's counts skip them, and the costs say why they were not run."""
    reason = "run.budget.usd=1 reached ($1.20 and 900 tokens spent)"
    error = Budget(BudgetSettings(usd=1), {}).not_run(reason)

    def attempt(task: str, status: AttemptStatus, error: str | None = None) -> Attempt:
        return Attempt(task_id=task, contestant="a", key="k", agent="metered",
                       status=status, error=error)  # fmt: skip

    kept = attempt("t2", AttemptStatus.INTERRUPTED, error)
    ran = [attempt("t1", AttemptStatus.FINISHED), attempt("t3", AttemptStatus.INFRA_ERROR, "x")]
    assert not_run_reason(kept) == reason
    assert [not_run_reason(a) for a in ran] == [None, None]
    found = unscored([*ran, kept], {"t1", "t2", "t3"})
    assert found.attempts == 2
    spent = report_costs([*ran, kept], [], price_table())
    assert (spent.not_run, spent.budget) == (1, reason)
    assert [row.attempts for row in spent.agents] == [2]
