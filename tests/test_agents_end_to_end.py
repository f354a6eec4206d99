"""Each real agent CLI end to end on a buggy checkout, driven by the scripted model server,
run as the race runs it (``run_logged``) but unconfined: the sandbox is the race's to test."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import components
from agent_sessions import make_session
from bugbout.core.plumbing.confinement.process import run_logged
from bugbout.core.race.agents import CodingAgent, Session
from bugbout.plugins.agents.claude_code import ClaudeCodeAgent
from bugbout.plugins.agents.codex import CodexAgent
from bugbout.plugins.agents.gemini_cli import GeminiCliAgent
from bugbout.plugins.agents.mini_swe_agent import MiniSweAgent
from bugbout.testing.model_server import ModelServer, Say, Script, Shell

FIX = Script(
    [
        Shell("sed -i 's/return a - b/return a + b/' calc.py"),
        Shell(
            "printf 'from calc import add\\n\\n\\ndef test_add():\\n    assert add(2, 3) == 5\\n'"
            " > tests/test_add.py"
        ),
        Shell("python3 -m pytest -q -p no:cacheprovider tests"),
        Say("Fixed add(): it subtracted instead of adding. Added tests/test_add.py."),
    ]
)
TIMEOUT = 180


def cli(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        components.missing("agent-clis", f"{name} is not on PATH")
    return found


def mini_executable() -> str:
    """mini-swe-agent lives in its own virtual environment: ``BUGBOUT_MINI`` names its
    ``mini``, else it must be on PATH."""
    configured = os.environ.get("BUGBOUT_MINI")
    if configured:
        if not os.access(configured, os.X_OK):
            components.missing("agent-clis", f"BUGBOUT_MINI={configured} is not an executable")
        return configured
    found = shutil.which("mini")
    if found is None:
        components.missing("agent-clis", "mini is not on PATH and BUGBOUT_MINI is not set")
    return found


def buggy_checkout(root: Path) -> Session:
    session = make_session(root)
    (session.workdir / "tests").mkdir()
    (session.workdir / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (session.workdir / "tests" / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add_zero():\n    assert add(1, 0) == 1\n"
    )
    return session


def run_agent(agent: CodingAgent, session: Session, server: ModelServer) -> int | None:
    """Run the adapter's invocation as the race does, unconfined; its exit code."""
    invocation = agent.invocation(session)
    assert invocation.confined
    assert invocation.endpoints == (server.url,)
    ended = run_logged(
        invocation.argv,
        cwd=session.workdir,
        env={**agent.environment(session), **invocation.env},
        stdin=invocation.stdin,
        timeout=TIMEOUT,
        stdout=session.logdir / "stdout.log",
        stderr=session.logdir / "stderr.log",
        limit=5_000_000,
    )
    assert not ended.timed_out
    return ended.exit_code


def logs(session: Session) -> str:
    return "".join(
        f"\n--- {path.name}:\n{path.read_text(errors='replace')[-3000:]}"
        for path in sorted(session.logdir.glob("*.log"))
    )


def assert_fixed(
    agent: CodingAgent, session: Session, server: ModelServer, code: int | None
) -> None:
    assert code == 0, logs(session)
    assert (session.workdir / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    files = {
        str(path.relative_to(session.workdir))
        for path in session.workdir.rglob("*")
        if path.is_file()
    }
    assert files == {"calc.py", "tests/test_calc.py", "tests/test_add.py"}, logs(session)
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=session.workdir,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert tests.returncode == 0, tests.stdout
    assert "2 passed" in tests.stdout
    assert [r.step for r in server.scripted_requests][:4] == [0, 1, 2, 3], server.requests
    summary, usage = agent.parse(session.logdir)
    assert summary == "Fixed add(): it subtracted instead of adding. Added tests/test_add.py."
    assert usage["input_tokens"] > 0
    assert usage["output_tokens"] > 0
    assert not agent.hit_usage_limit(session.logdir, code)


@pytest.mark.slow
def test_codex_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cli("codex")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-scripted")
    session = buggy_checkout(tmp_path)
    with ModelServer(FIX) as server:
        agent = CodexAgent("gpt-5.5", base_url=f"{server.url}/v1", reasoning_effort="low")
        code = run_agent(agent, session, server)
        assert_fixed(agent, session, server, code)
        assert {r.path for r in server.requests} == {"/v1/responses"}
        assert server.scripted_requests[0].headers["authorization"] == "Bearer sk-scripted"
    assert (session.logdir / "last.txt").read_text().strip().startswith("Fixed add()")


@pytest.mark.slow
def test_claude_code_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cli("claude")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-scripted")
    session = buggy_checkout(tmp_path)
    # Safe mode: a checkout's CLAUDE.md, hooks and MCP servers are left out.
    (session.workdir / "CLAUDE.md").write_text("MARKER: house rules from the checkout\n")
    (session.workdir / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"x": {"command": "touch", "args": [str(tmp_path / "mcp")]}}})
    )
    with ModelServer(FIX) as server:
        agent = ClaudeCodeAgent("claude-sonnet-4-5", base_url=server.url)
        code = run_agent(agent, session, server)
        (session.workdir / "CLAUDE.md").unlink()
        (session.workdir / ".mcp.json").unlink()
        assert_fixed(agent, session, server, code)
        scripted = server.scripted_requests
        assert "MARKER" not in json.dumps(scripted[0].body)
        tools = {tool["name"] for tool in scripted[0].body["tools"]}
        assert tools == {"Bash", "Edit", "Read", "Write", "Glob", "Grep"}
        assert scripted[0].headers["x-api-key"] == "sk-ant-scripted"
    assert not (tmp_path / "mcp").exists()


@pytest.mark.slow
def test_gemini_cli_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cli("gemini")
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-scripted")
    session = buggy_checkout(tmp_path)
    with ModelServer(FIX) as server:
        agent = GeminiCliAgent("gemini-2.5-flash", base_url=server.url)
        code = run_agent(agent, session, server)
        assert_fixed(agent, session, server, code)
        declared = {
            declaration["name"]
            for tool in server.scripted_requests[0].body["tools"]
            for declaration in tool.get("functionDeclarations", ())
        }
        assert "run_shell_command" in declared
        assert not declared & {"web_fetch", "google_web_search"}


@pytest.mark.slow
@pytest.mark.parametrize("text_actions", [False, True], ids=["tool-calls", "text-actions"])
def test_mini_swe_agent_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text_actions: bool
) -> None:
    mini = mini_executable()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-scripted")
    session = buggy_checkout(tmp_path)
    with ModelServer(FIX) as server:
        agent = MiniSweAgent(
            "openai/scripted",
            base_url=f"{server.url}/v1",
            step_limit=10,
            text_actions=text_actions,
            executable=mini,
        )
        code = run_agent(agent, session, server)
        assert_fixed(agent, session, server, code)
        assert {r.path for r in server.requests} == {"/v1/chat/completions"}
    info = json.loads((session.logdir / "trajectory.json").read_text())["info"]
    assert info["exit_status"] == "Submitted"


@pytest.mark.slow
def test_mini_swe_agent_step_limit_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mini = mini_executable()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-scripted")
    session = buggy_checkout(tmp_path)
    with ModelServer(Script([Shell("ls"), Shell("ls")])) as server:
        agent = MiniSweAgent(
            "openai/scripted", base_url=f"{server.url}/v1", step_limit=1, executable=mini
        )
        code = run_agent(agent, session, server)
    assert code == 0, logs(session)  # the race then judges whatever patch there is
    info = json.loads((session.logdir / "trajectory.json").read_text())["info"]
    assert info["exit_status"] == "LimitsExceeded"
    summary, usage = agent.parse(session.logdir)
    assert summary == "mini-swe-agent stopped at its step limit without submitting."
    assert usage["input_tokens"] > 0
