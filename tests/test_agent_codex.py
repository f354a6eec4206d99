"""The codex adapter: its command line, environment and providers, and its log parsing on
logs recorded from the real CLI (``tests/data/agents/``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_sessions import DATA, NO_USAGE, environment, make_session
from bugbout.plugins.agents.codex import CodexAgent


def test_codex_argv_against_openai(tmp_path: Path, fake_bin: Path, secrets: dict[str, str]) -> None:
    session = make_session(tmp_path)
    agent = CodexAgent("gpt-5.5", reasoning_effort="high")
    invocation = agent.invocation(session)
    assert invocation.argv == [
        str(fake_bin / "codex"), "exec", "--json", "-o", str(session.logdir / "last.txt"),
        "--skip-git-repo-check", "--ephemeral", "--ignore-user-config", "--ignore-rules",
        "-s", "danger-full-access", "-m", "gpt-5.5",
        "-c", 'model_reasoning_effort="high"', "-c", "web_search=disabled",
        "--disable", "plugins", "--disable", "apps", "--disable", "remote_plugin",
        "-c", "analytics.enabled=false", "-",
    ]  # fmt: skip
    assert invocation.stdin == session.prompt
    assert invocation.endpoints == ("https://api.openai.com",)
    assert invocation.confined
    assert invocation.env == {}


def test_codex_environment_leaks_nothing(
    tmp_path: Path, fake_bin: Path, secrets: dict[str, str]
) -> None:
    session = make_session(tmp_path)
    env = environment(CodexAgent("gpt-5.5"), session)
    assert "ANTHROPIC_API_KEY" not in env
    assert "SECRET_TOKEN" not in env
    assert "do-not-leak" not in env.values()
    assert "sk-ant-user" not in env.values()
    # The built-in OpenAI provider ignores OPENAI_API_KEY: the key goes in CODEX_API_KEY.
    assert env["CODEX_API_KEY"] == env["OPENAI_API_KEY"] == "sk-openai-user"
    assert env["HOME"] == str(session.home)
    assert env["CODEX_HOME"] == str(session.home / ".codex")
    assert Path(env["CODEX_HOME"]).is_dir()  # Codex refuses a CODEX_HOME that does not exist
    assert Path(env["TMPDIR"]).is_dir()
    assert not Path(env["CODEX_HOME"]).is_relative_to(env["TMPDIR"])
    assert env["TERM"] == "dumb"
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"


def test_codex_with_a_base_url_configures_its_own_provider(
    tmp_path: Path, fake_bin: Path, secrets: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    session = make_session(tmp_path)
    agent = CodexAgent("gpt-5.5", base_url="http://127.0.0.1:8080/v1/")
    argv = agent.invocation(session).argv
    provider = argv[argv.index("model_provider=bugbout") + 2]
    assert provider == (
        'model_providers.bugbout={name="bugbout", base_url="http://127.0.0.1:8080/v1", '
        'wire_api="responses", env_key="OPENAI_API_KEY"}'
    )
    assert agent.invocation(session).endpoints == ("http://127.0.0.1:8080",)
    env = environment(agent, session)
    assert env["OPENAI_API_KEY"] == "sk-openai-user"
    assert "CODEX_API_KEY" not in env
    # Without a key in the agent's environment the provider sends none (Codex would
    # otherwise refuse to start).
    monkeypatch.delenv("OPENAI_API_KEY")
    argv = agent.invocation(session).argv
    assert "env_key" not in argv[argv.index("model_provider=bugbout") + 2]


def test_codex_with_a_local_provider(
    tmp_path: Path, fake_bin: Path, secrets: dict[str, str]
) -> None:
    session = make_session(tmp_path)
    agent = CodexAgent("qwen3-coder:30b", local_provider="ollama")
    invocation = agent.invocation(session)
    assert invocation.argv[invocation.argv.index("--oss") : invocation.argv.index("--oss") + 3] == [
        "--oss", "--local-provider", "ollama",
    ]  # fmt: skip
    assert "model_provider=bugbout" not in invocation.argv
    assert invocation.endpoints == ("http://127.0.0.1:11434",)
    env = environment(agent, session)
    assert env["CODEX_OSS_BASE_URL"] == "http://127.0.0.1:11434/v1"
    assert agent.vendor == "alibaba"
    assert "OPENAI_API_KEY" not in env
    assert "CODEX_API_KEY" not in env
    studio = CodexAgent(local_provider="lmstudio", base_url="http://10.0.0.5:4321/v1")
    assert studio.invocation(session).endpoints == ("http://10.0.0.5:4321",)
    assert environment(studio, session)["CODEX_OSS_BASE_URL"] == "http://10.0.0.5:4321/v1"


def test_codex_parse_a_recorded_run() -> None:
    summary, usage = CodexAgent().parse(DATA / "codex")
    assert summary == "Fixed add(): it subtracted instead of adding. Added tests/test_add.py."
    assert usage == {**NO_USAGE, "input_tokens": 400, "output_tokens": 80}
    assert not CodexAgent().hit_usage_limit(DATA / "codex", 0)


def test_codex_usage_limit() -> None:
    logdir = DATA / "codex-usage-limit"
    agent = CodexAgent()
    assert agent.hit_usage_limit(logdir, 1)
    assert not agent.hit_usage_limit(logdir, 0)
    summary, usage = agent.parse(logdir)
    assert summary.startswith("Codex failed: You\u2019ve hit your usage limit.")
    assert usage == NO_USAGE
    assert not agent.hit_usage_limit(DATA / "codex", 1)  # failed, but not on a limit


def test_codex_usage_counts_cached_input_apart(tmp_path: Path) -> None:
    # Synthetic events in Codex's format: input and output include cached input and
    # reasoning; bugbout's parts are disjoint.
    events = [
        {"type": "item.completed", "item": {"type": "agent_message", "text": "Step one."}},
        {"type": "turn.completed", "usage": {"input_tokens": 1000, "cached_input_tokens": 600,
                                             "output_tokens": 50, "reasoning_output_tokens": 30}},
        {"type": "turn.completed", "usage": {"input_tokens": 10, "output_tokens": 5}},
    ]  # fmt: skip
    (tmp_path / "stdout.log").write_text(
        "Reading prompt from stdin...\n" + "".join(json.dumps(e) + "\n" for e in events)
    )
    summary, usage = CodexAgent().parse(tmp_path)
    assert summary == "Step one."
    assert usage == {
        "input_tokens": 410,
        "output_tokens": 55,
        "cache_read_tokens": 600,
        "cache_write_tokens": 0,
    }
    (tmp_path / "stdout.log").write_text("")
    (tmp_path / "last.txt").write_text("From the last-message file.\n")
    assert CodexAgent().parse(tmp_path) == ("From the last-message file.", NO_USAGE)
