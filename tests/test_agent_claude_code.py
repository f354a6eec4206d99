"""The claude-code adapter: its command line and environment, and its log parsing on logs
recorded from the real CLI (``tests/data/agents/``)."""

from __future__ import annotations

import json
from pathlib import Path

from agent_sessions import DATA, NO_USAGE, environment, make_session
from bugbout.plugins.agents import claude_code
from bugbout.plugins.agents.claude_code import ClaudeCodeAgent


def test_claude_code_argv(tmp_path: Path, fake_bin: Path, secrets: dict[str, str]) -> None:
    session = make_session(tmp_path)
    invocation = ClaudeCodeAgent("claude-sonnet-4-5", effort="high").invocation(session)
    assert invocation.argv == [
        str(fake_bin / "claude"), "-p",
        "--safe-mode", "--setting-sources", "user", "--strict-mcp-config",
        "--tools", "Bash,Edit,Read,Write,Glob,Grep", "--disallowedTools", "WebSearch,WebFetch",
        "--permission-mode", "bypassPermissions",
        "--output-format", "stream-json", "--verbose", "--no-session-persistence",
        "--model", "claude-sonnet-4-5", "--effort", "high",
    ]  # fmt: skip
    assert invocation.stdin == session.prompt
    assert invocation.endpoints == ("https://api.anthropic.com",)
    assert invocation.confined
    bare = ClaudeCodeAgent().invocation(session).argv
    assert "--model" not in bare
    assert "--effort" not in bare


def test_claude_code_environment(tmp_path: Path, fake_bin: Path, secrets: dict[str, str]) -> None:
    session = make_session(tmp_path)
    agent = ClaudeCodeAgent("sonnet", env={"MAX_THINKING_TOKENS": "1024"})
    env = environment(agent, session)
    assert env["ANTHROPIC_API_KEY"] == "sk-ant-user"
    for leaked in ("OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY", "SECRET_TOKEN"):
        assert leaked not in env
    assert env["CLAUDE_CONFIG_DIR"] == str(session.home / ".claude")
    assert env["IS_SANDBOX"] == "1"
    for variable in claude_code.QUIET:
        assert env[variable] == "1"
    assert env["MAX_THINKING_TOKENS"] == "1024"
    assert "ANTHROPIC_BASE_URL" not in env
    local = ClaudeCodeAgent(base_url="http://127.0.0.1:9000")
    assert environment(local, session)["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9000"
    assert local.invocation(session).endpoints == ("http://127.0.0.1:9000",)
    proxied = ClaudeCodeAgent(base_url="https://user:pw@llm.example.com:8443/anthropic")
    assert proxied.invocation(session).endpoints == ("https://llm.example.com:8443",)


def test_claude_code_parse_a_recorded_run() -> None:
    agent = ClaudeCodeAgent()
    summary, usage = agent.parse(DATA / "claude-code")
    assert summary == "Fixed add(): it subtracted instead of adding. Added tests/test_add.py."
    assert usage == {**NO_USAGE, "input_tokens": 400, "output_tokens": 80}
    assert not agent.hit_usage_limit(DATA / "claude-code", 0)


def test_claude_code_rate_limit() -> None:
    logdir = DATA / "claude-code-rate-limit"
    agent = ClaudeCodeAgent()
    assert agent.hit_usage_limit(logdir, 1)
    summary, usage = agent.parse(logdir)
    assert summary.startswith("API Error: Request rejected (429)")
    assert usage == NO_USAGE


def test_claude_code_usage_limit_text_and_cache_tokens(tmp_path: Path) -> None:
    # Synthetic result events in Claude Code's format.
    result = {
        "type": "result", "is_error": True, "api_error_status": None,
        "result": "Claude AI usage limit reached|1798000000",
        "usage": {"input_tokens": 5, "cache_creation_input_tokens": 7,
                  "cache_read_input_tokens": 11, "output_tokens": 13},
    }  # fmt: skip
    (tmp_path / "stdout.log").write_text(json.dumps(result) + "\n")
    agent = ClaudeCodeAgent()
    assert agent.hit_usage_limit(tmp_path, 1)
    assert agent.parse(tmp_path)[1] == {
        "input_tokens": 5,
        "output_tokens": 13,
        "cache_read_tokens": 11,
        "cache_write_tokens": 7,
    }
    result.update(result="Error: the tests failed", is_error=True)
    (tmp_path / "stdout.log").write_text(json.dumps(result) + "\n")
    assert not agent.hit_usage_limit(tmp_path, 1)
    (tmp_path / "stdout.log").write_text("not json\n")
    (tmp_path / "stderr.log").write_text("Error: 429 Too Many Requests\n")
    assert agent.hit_usage_limit(tmp_path, 1)  # no result event: the generic check
