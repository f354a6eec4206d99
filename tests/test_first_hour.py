"""A new user's first hour, end to end: ``init``, ``doctor`` and ``run`` on their own
repository with the one agent they have installed, and no edit of the ``bugbout.yaml``
that ``init`` wrote. The agent is the real Claude Code CLI; its model is the scripted
server on 127.0.0.1 (named on the command line, as a team with a gateway would)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import components
from bugbout.testing.model_server import ModelServer, Say, Script, Shell

FIXED_FMT = 'def fmt(x):\n    """Format x."""\n    return "%g" % x\n'
FIX = Script(
    [
        Shell(f"cat > src/calc/fmt.py <<'EOF'\n{FIXED_FMT}EOF"),
        Say("Fixed fmt(): it formats with %g now."),
    ]
)


def bugbout(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bugbout", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip


@pytest.mark.slow
def test_first_hour_end_to_end_from_init_to_a_report(
    calc_repo: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    if shutil.which("claude") is None:
        components.missing("agent-clis", "claude is not on PATH")
    repo = tmp_path / "calc"
    shutil.copytree(calc_repo[0], repo)
    env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-scripted"}
    for other in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        env.pop(other, None)

    init = bugbout("init", cwd=repo, env=env)
    assert init.returncode == 0, init.stderr
    assert "contestants: my-claude-code)" in init.stderr
    config = (repo / "bugbout.yaml").read_text()

    with ModelServer(FIX) as server:
        endpoint = f"contestant.my-claude-code.base-url={server.url}"
        doctor = bugbout("doctor", endpoint, cwd=repo, env=env)
        assert doctor.returncode == 0, doctor.stdout + doctor.stderr
        assert "my-claude-code" in doctor.stdout
        run = bugbout("run", endpoint, "miner.limit=1", "--quiet", cwd=repo, env=env)
        assert run.returncode == 0, run.stdout + run.stderr
        assert server.scripted_requests, "the agent never reached the model"

    assert (repo / "bugbout.yaml").read_text() == config  # nothing edited
    [report] = (repo / ".bugbout").glob("**/report.json")
    data = json.loads(report.read_text())
    [row] = data["agents"]
    assert (row["contestant"], row["scored"], row["resolved"]) == ("my-claude-code", 1, 1)
    assert {path.name for path in report.parent.iterdir()} >= {"report.md", "report.html"}
