"""The gemini-cli adapter: its command line, settings and environment, and its log parsing
on logs recorded from the real CLI (``tests/data/agents/``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_sessions import DATA, NO_USAGE, environment, make_session
from bugbout.core.contract.transcript import Step
from bugbout.plugins.agents.gemini_cli import GeminiCliAgent, transcript


def test_gemini_cli_argv_and_settings(
    tmp_path: Path, fake_bin: Path, secrets: dict[str, str]
) -> None:
    session = make_session(tmp_path)
    invocation = GeminiCliAgent("gemini-2.5-flash").invocation(session)
    assert invocation.argv == [
        str(fake_bin / "gemini"), "-p", "", "--yolo", "--output-format", "stream-json",
        "-m", "gemini-2.5-flash",
    ]  # fmt: skip
    assert invocation.stdin == session.prompt
    assert invocation.endpoints == ("https://generativelanguage.googleapis.com",)
    settings = json.loads((session.home / ".gemini" / "settings.json").read_text())
    assert settings["security"] == {
        "auth": {"selectedType": "gemini-api-key"},
        "folderTrust": {"enabled": False},
    }
    assert settings["telemetry"] == {"enabled": False}
    assert settings["privacy"] == {"usageStatisticsEnabled": False}
    assert settings["general"]["enableAutoUpdate"] is False
    assert settings["tools"]["exclude"] == ["web_fetch", "google_web_search"]
    policy = (session.home / ".gemini" / "policies" / "bugbout.toml").read_text()
    assert 'toolName = ["web_fetch", "google_web_search"]' in policy
    assert 'decision = "deny"' in policy
    assert not list(session.workdir.iterdir())  # nothing written into the checkout


def test_gemini_cli_environment(tmp_path: Path, fake_bin: Path, secrets: dict[str, str]) -> None:
    session = make_session(tmp_path)
    agent = GeminiCliAgent(base_url="http://127.0.0.1:7000")
    env = environment(agent, session)
    assert env["GEMINI_API_KEY"] == "gemini-user"
    for leaked in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SECRET_TOKEN"):
        assert leaked not in env
    assert env["GEMINI_CLI_HOME"] == str(session.home)
    assert env["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:7000"
    assert env["GEMINI_TELEMETRY_ENABLED"] == "false"
    assert env["GEMINI_CLI_TRUST_WORKSPACE"] == "true"
    assert env["NO_BROWSER"] == "1"
    assert agent.invocation(session).endpoints == ("http://127.0.0.1:7000",)
    assert "GOOGLE_GEMINI_BASE_URL" not in environment(GeminiCliAgent(), session)


def test_gemini_cli_parse_a_recorded_run() -> None:
    summary, usage = GeminiCliAgent().parse(DATA / "gemini-cli")
    assert summary == "Fixed add(): it subtracted instead of adding."
    assert usage == {**NO_USAGE, "input_tokens": 400, "output_tokens": 80}


def test_gemini_cli_exit_codes_become_clear_messages() -> None:
    agent = GeminiCliAgent()
    summary, usage = agent.parse(DATA / "gemini-cli-auth")
    assert summary == (
        "Gemini CLI failed: When "
        "using Gemini API, you must specify the GEMINI_API_KEY environment variable. Update "
        "your environment and try again (no reload needed if using .env)!"
    )
    assert usage == NO_USAGE
    assert not agent.hit_usage_limit(DATA / "gemini-cli-auth", 41)


@pytest.mark.parametrize(
    ("stderr", "expected"),
    [
        (
            "Error in /home/.gemini/settings.json: bad value\n  exitCode: 52\n",
            "Gemini CLI failed (its configuration is invalid, exit 52): "
            "Error in /home/.gemini/settings.json: bad value",
        ),
        (
            "Warning: tools.exclude in settings.json is deprecated\n"
            "YOLO mode is enabled. All tool calls will be automatically approved.\n"
            "No input provided via stdin. Input can be provided by piping data into gemini.\n",
            "Gemini CLI failed: No input provided via stdin. Input can be provided by piping "
            "data into gemini.",
        ),
        ("\x1b[31mSomething odd\x1b[0m\n", "Gemini CLI failed: Something odd"),
    ],
)
def test_gemini_cli_failures(tmp_path: Path, stderr: str, expected: str) -> None:
    (tmp_path / "stderr.log").write_text(stderr)
    assert GeminiCliAgent().parse(tmp_path)[0] == expected


def test_gemini_cli_quota() -> None:
    agent = GeminiCliAgent()
    assert agent.hit_usage_limit(DATA / "gemini-cli-quota", 1)
    assert not agent.hit_usage_limit(DATA / "gemini-cli-quota", 0)
    assert not agent.hit_usage_limit(DATA / "gemini-cli", 1)


def test_gemini_cli_usage_over_models(tmp_path: Path) -> None:
    # Synthetic stats in the stream's format: cached input counts within input_tokens,
    # thoughts and tool-use prompts only within total_tokens.
    stats = {"models": {
        "gemini-2.5-pro": {"total_tokens": 1075, "input_tokens": 1000, "output_tokens": 50,
                           "cached": 400, "input": 600},
        "gemini-2.5-flash-lite": {"total_tokens": 11, "input_tokens": 10, "output_tokens": 1},
    }}  # fmt: skip
    events = [
        {"type": "message", "role": "assistant", "content": "Do", "delta": True},
        {"type": "message", "role": "assistant", "content": "ne.", "delta": True},
        {"type": "result", "status": "success", "stats": stats},
    ]
    (tmp_path / "stdout.log").write_text("".join(json.dumps(e) + "\n" for e in events))
    assert GeminiCliAgent().parse(tmp_path) == (
        "Done.",
        {
            "input_tokens": 610,
            "output_tokens": 76,
            "cache_read_tokens": 400,
            "cache_write_tokens": 0,
        },
    )


def test_gemini_cli_tool_calls_as_steps(tmp_path: Path) -> None:
    # The stream's tool events: an edit, a failed tool call, what was said between them.
    events = [
        {"type": "message", "role": "assistant", "content": "Editing.", "delta": True},
        {"type": "tool_use", "tool_name": "replace", "tool_id": "a",
         "parameters": {"file_path": "calc.py", "old_string": "-", "new_string": "+"}},
        {"type": "tool_result", "tool_id": "a", "status": "success", "output": "ok"},
        {"type": "tool_use", "tool_name": "read_file", "tool_id": "b",
         "parameters": {"file_path": "gone.py"}},
        {"type": "tool_result", "tool_id": "b", "status": "error",
         "error": {"type": "file_not_found", "message": "File not found."}},
        {"type": "result", "status": "error",
         "error": {"type": "Error", "message": "Model stream ended with an invalid chunk."}},
    ]  # fmt: skip
    (tmp_path / "stdout.log").write_text("".join(json.dumps(e) + "\n" for e in events))
    assert transcript(tmp_path) == [
        Step("message", "Editing."),
        Step("edit", "calc.py", "ok"),
        Step("tool", "read_file(file_path=gone.py)", "File not found.", failed=True),
        Step("final", "Gemini CLI failed: Model stream ended with an invalid chunk.", failed=True),
    ]
