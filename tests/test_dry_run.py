"""``bugbout run --dry-run``: the attempts a bout would make, those the store has, their
estimated cost and the smallest difference its tasks can detect, with nothing run; and
the line a sweep prints before its first job."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from bugbout.config.kept import FILE
from bugbout.core.report.power import detectable_difference
from bugbout.core.store.race_records import Attempt, AttemptStatus, Score
from cli_runs import bugbout
from stored_bouts import store_bout, task_ids

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("litellm") is not None, reason="prices would be LiteLLM's"
)

TASKS = 30
CONFIG = {
    "defaults": ["base", "_self_"],
    "project": {"source": "src/calc"},
    "contestants": {
        "cx": {"agent": "codex", "model": "gpt-5"},
        "sonnet": {"agent": "claude-code", "model": "claude-sonnet-4-5"},
    },
}
PAST = [{"input_tokens": 100_000, "output_tokens": 10_000},
        {"input_tokens": 300_000, "output_tokens": 30_000}]  # fmt: skip
"""Two past attempts of cx, on a task of an earlier bout."""
CODEX = (200_000 * 1.25 + 20_000 * 10) / 1e6
"""Their mean at gpt-5's packaged price (USD per million: input 1.25, output 10)."""
CLAUDE = (60_000 * 3 + 1_500_000 * 0.3 + 120_000 * 3.75 + 25_000 * 15) / 1e6
"""Claude Code's default tokens at claude-sonnet-4's (input 3, cache read 0.3, cache
write 3.75, output 15)."""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store with 30 scored tasks with ground truth, cx's two past attempts, and
    two contestants whose programs are not installed (nothing could run)."""
    monkeypatch.setenv("UV_TOOL_DIR", str(tmp_path / "no-tools"))
    project = tmp_path / "project"
    store = store_bout(project, {"other": dict.fromkeys(task_ids(TASKS), Score.RESOLVED)})
    for number, usage in enumerate(PAST):
        attempt = Attempt(
            task_id="old", contestant="cx", key=f"k{number}", agent="codex",
            status=AttemptStatus.FINISHED,
            model="gpt-5", usage=usage,
        )  # fmt: skip
        store.write(f"attempts/old/cx/k{number}.json", attempt)
    (project / "bugbout.yaml").write_text(json.dumps(CONFIG))
    return project


def test_the_dry_run_counts_prices_and_sizes_the_bout(project: Path) -> None:
    before = sorted((project / ".bugbout").rglob("*"))
    result = bugbout("run", "--dry-run", "run.budget.usd=20", cwd=project)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == (
        f"dry run (nothing runs): {TASKS} task(s) x 2 contestant(s) x 1 repeat = "
        f"{2 * TASKS} attempt(s); 0 in the store (reused, free), {2 * TASKS} to run"
    )
    assert f"  cx (contestant, gpt-5): {TASKS} to run, 0 reused; 220,000 tokens per " \
        f"attempt (mean of 2 past attempt(s)), ${CODEX:.3f} each, ${CODEX * TASKS:,.2f} in all" \
        in lines  # fmt: skip
    sonnet = next(line for line in lines if line.startswith("  sonnet "))
    assert "1,705,000 tokens per attempt (the default for claude-code)" in sonnet
    total = TASKS * (CODEX + CLAUDE)
    assert f"estimated cost: ${total:,.2f} (prices: bugbout's table of 20" in result.stdout
    assert "budget: run.budget.usd=20: the estimate is over it" in result.stdout
    expected = detectable_difference(TASKS)
    assert expected is not None
    assert f"detectable difference: {expected:.0%} in resolve rate at 80% power" in result.stdout
    after = [path for path in sorted((project / ".bugbout").rglob("*")) if path.name != FILE]
    assert after == before  # nothing ran, nothing written but the composition kept to reuse


def test_a_sweep_says_how_many_agent_runs_it_will_make_first(project: Path) -> None:
    result = bugbout("-m", "contestant=cx,sonnet,[cx,sonnet]", cwd=project)
    total = TASKS * (CODEX + CLAUDE)
    assert result.stdout.splitlines()[0] == (
        f"sweep: 3 job(s) will make {2 * TASKS} agent run(s), about ${total:,.2f}; "
        "`bugbout run --dry-run` with a job's overrides details one"
    ), result.stdout + result.stderr
