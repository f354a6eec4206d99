"""Contestants from adapters not built in: written in Python, published under the entry-point
group, or named like a packaged one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from one_bug import AGENTS, attempts, bugbout, write_agent


@pytest.mark.slow
def test_python_api_with_an_adapter_written_in_python(bout_repo: Path, tmp_path: Path) -> None:
    from bugbout import Bout, CodingAgent, Invocation, Project, Session

    script = write_agent(tmp_path / "agents", "mine", AGENTS["good"])

    class MyAgent(CodingAgent):
        harness = "my-agent"
        executable = sys.executable

        def invocation(self, session: Session) -> Invocation:
            return Invocation([self.command(), str(script)], stdin=session.prompt)

        def parse(self, logdir: Path) -> tuple[str, dict[str, int]]:
            return (logdir / "stdout.log").read_text().strip(), {"output_tokens": 7}

    project = Project.load(bout_repo, overrides=["environment=interpreter"])
    result = Bout(project, contestants=[MyAgent("my-model")]).run()
    (attempt,) = result.attempts
    assert attempt.contestant == "my-agent/my-model"
    assert attempt.vendor is None
    assert attempt.status == "finished"
    assert attempt.summary == "Fixed middle() for even-length input."
    assert attempt.usage == {"output_tokens": 7}
    assert [change.path for change in attempt.patch.files] == [
        "src/mid/core.py",
        "tests/test_regression.py",
    ]
    assert [task.id for task in result.tasks.tasks] == [attempt.task_id]


@pytest.mark.slow
def test_an_adapter_published_under_the_entry_point_group(bout_repo: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "echo_agent-1.0.dist-info").mkdir(parents=True)
    (site / "echo_agent-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: echo-agent\nVersion: 1.0\n"
    )
    (site / "echo_agent-1.0.dist-info" / "entry_points.txt").write_text(
        "[bugbout]\necho = echo_agent\n"
    )
    (site / "echo_agent.py").write_text(
        textwrap.dedent(
            """
            import sys
            from bugbout import AgentPlugin, CodingAgent, Invocation, hookimpl

            class Echo(CodingAgent):
                harness = "echo"
                executable = sys.executable

                def invocation(self, session):
                    code = "import sys; print(sys.stdin.read().splitlines()[0])"
                    return Invocation([self.command(), "-c", code], stdin=session.prompt)

            @hookimpl
            def bugbout_agents():
                yield AgentPlugin(name="echo", factory=Echo.from_options, options=Echo.Options)
            """
        )
    )
    config = json.loads((bout_repo / "bugbout.yaml").read_text())
    config["contestants"] = {"mine": {"agent": "echo", "model": "claude-opus"}}
    (bout_repo / "bugbout.yaml").write_text(json.dumps(config))
    result = subprocess.run(
        [sys.executable, "-m", "bugbout", "run", "environment=interpreter"],
        cwd=bout_repo, capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": str(site)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    record = attempts(bout_repo)["mine"]
    assert (record["agent"], record["vendor"], record["status"]) == (
        "echo",
        "anthropic",
        "finished",
    )
    assert (
        record["summary"]
        == "You are working in a checkout of a Python project. A user reported this issue:"
    )


def test_own_contestant_named_like_a_packaged_one_is_a_clear_error(bout_repo: Path) -> None:
    config = json.loads((bout_repo / "bugbout.yaml").read_text())
    config["contestants"] = {"codex": {"agent": "codex", "model": "gpt-5"}}
    (bout_repo / "bugbout.yaml").write_text(json.dumps(config))
    result = bugbout("run", cwd=bout_repo)
    assert result.returncode == 2
    assert "contestant 'codex' has the name of a packaged option" in result.stderr
