"""The built-in agent adapters: the command line, environment and endpoints each one gives,
its log parsing on logs recorded from the real CLIs (``tests/data/agents/``), and each real
CLI end to end on a buggy checkout, driven by the scripted model server.

The end-to-end tests build the session by hand and run the adapter's invocation as the race
does (``run_logged``), but unconfined: the sandboxed path is the race's to test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

import components
from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.manager import Plugins, make_plugins
from bugbout.core.plumbing.process import run_logged
from bugbout.core.race.agents import CodingAgent, Session
from bugbout.doctor import dummy_session
from bugbout.plugins.agents import claude_code, codex, gemini_cli, mini_swe_agent
from bugbout.plugins.agents.claude_code import ClaudeCodeAgent
from bugbout.plugins.agents.codex import CodexAgent
from bugbout.plugins.agents.gemini_cli import GeminiCliAgent
from bugbout.plugins.agents.mini_swe_agent import MiniSweAgent
from bugbout.testing.model_server import ModelServer, Say, Script, Shell

DATA = Path(__file__).parent / "data" / "agents"
CONF = Path(__file__).parents[1] / "src" / "bugbout" / "conf" / "contestant"
MODULES = {
    "codex": codex,
    "claude-code": claude_code,
    "gemini-cli": gemini_cli,
    "mini-swe-agent": mini_swe_agent,
}
EXECUTABLES = ("codex", "claude", "gemini", "mini")
NO_USAGE = {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0}


def make_session(root: Path, prompt: str = "Fix the bug in add().") -> Session:
    return dummy_session(root, prompt)


@pytest.fixture
def fake_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Stand-ins for the four CLIs first on PATH, so argv[0] is known and nothing runs."""
    directory = tmp_path / "bin"
    directory.mkdir()
    for name in EXECUTABLES:
        program = directory / name
        program.write_text("#!/bin/sh\nexit 0\n")
        program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{directory}{os.pathsep}{os.environ.get('PATH', '')}")
    return directory


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Every vendor's key, and a secret of nobody's, in the user's environment."""
    values = {
        "OPENAI_API_KEY": "sk-openai-user",
        "ANTHROPIC_API_KEY": "sk-ant-user",
        "GEMINI_API_KEY": "gemini-user",
        "OPENROUTER_API_KEY": "sk-or-user",
        "SECRET_TOKEN": "do-not-leak",
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CODEX_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    return values


def environment(agent: CodingAgent, session: Session) -> dict[str, str]:
    """The agent process's whole environment, as the race builds it."""
    return {**agent.environment(session), **agent.invocation(session).env}


# --------------------------------------------------------------------------------------------
# Plugins and packaged options


@pytest.fixture
def agent_plugins() -> Plugins:
    plugins = make_plugins(entry_points=False)
    for module in MODULES.values():
        if module.__name__ not in plugins.distributions:
            plugins.register(module, name=module.__name__, distribution="bugbout")
    return plugins


@pytest.mark.parametrize("name", sorted(MODULES))
def test_packaged_options_match_the_adapter(name: str, agent_plugins: Plugins) -> None:
    path = CONF / f"{name}.yaml"
    assert path.read_text().splitlines()[0] == f"# @package contestant.{name}"
    packaged = yaml.safe_load(path.read_text())
    assert packaged.pop("agent") == name
    spec = agent_plugins.get("agent", name).spec
    defaults = spec.options().model_dump(by_alias=True)
    assert {key: defaults[key] for key in packaged} == packaged
    assert spec.description


def test_plugins_build_adapters_from_validated_options(agent_plugins: Plugins) -> None:
    agent = agent_plugins.create(
        "agent", "codex", {"model": "gpt-5.5", "reasoning-effort": "high", "name": "codex"}
    )
    assert isinstance(agent, CodexAgent)
    assert agent.options.reasoning_effort == "high"
    assert agent.name == "codex"
    agent = agent_plugins.create("agent", "mini-swe-agent", {"model": "openai/gpt-5"})
    assert isinstance(agent, MiniSweAgent)
    assert agent.options.step_limit == 75
    with pytest.raises(ConfigError, match=r"reasoning-effort"):
        agent_plugins.create("agent", "codex", {"reasoning_efort": "high"})
    with pytest.raises(ConfigError, match=r"local-provider"):
        agent_plugins.create("agent", "codex", {"local-provider": "vllm"})
    with pytest.raises(ConfigError, match=r"not an http"):
        agent_plugins.create("agent", "claude-code", {"base-url": "ftp://example.com"})
    with pytest.raises(ConfigError, match=r"needs a `model`"):
        agent_plugins.create("agent", "mini-swe-agent", {})


@pytest.mark.parametrize(
    ("agent", "executable", "harness", "vendor"),
    [
        (CodexAgent(), "codex", "codex", "openai"),
        (ClaudeCodeAgent(), "claude", "claude-code", "anthropic"),
        (GeminiCliAgent(), "gemini", "gemini-cli", "google"),
        (MiniSweAgent("openai/gpt-5"), "mini", "mini-swe-agent", "openai"),
    ],
)
def test_names_and_executables(
    agent: CodingAgent, executable: str, harness: str, vendor: str
) -> None:
    assert agent.executable == executable
    assert agent.harness == harness
    assert agent.vendor == vendor
    assert agent.name.startswith(harness)


def test_a_missing_cli_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ConfigError, match=r"needs 'codex', which is not on PATH"):
        CodexAgent().invocation(make_session(tmp_path))


# --------------------------------------------------------------------------------------------
# codex


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


# --------------------------------------------------------------------------------------------
# claude-code


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


# --------------------------------------------------------------------------------------------
# gemini-cli


def test_gemini_cli_argv_and_settings(
    tmp_path: Path, fake_bin: Path, secrets: dict[str, str]
) -> None:
    session = make_session(tmp_path)
    invocation = GeminiCliAgent("gemini-2.5-flash").invocation(session)
    assert invocation.argv == [
        str(fake_bin / "gemini"), "-p", "", "--yolo", "--output-format", "json",
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
    assert summary == "Fixed add(): it subtracted instead of adding. Added tests/test_add.py."
    assert usage == {**NO_USAGE, "input_tokens": 400, "output_tokens": 80}


def test_gemini_cli_exit_codes_become_clear_messages() -> None:
    agent = GeminiCliAgent()
    summary, usage = agent.parse(DATA / "gemini-cli-auth")
    assert summary == (
        "Gemini CLI failed (authentication failed (is GEMINI_API_KEY set?), exit 41): When "
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
            '{"session_id": "x", "error": {"type": "FatalInputError", '
            '"message": "No input provided via stdin.", "code": 42}}\n',
            "Gemini CLI failed (the input was refused, exit 42): No input provided via stdin.",
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
    # Synthetic stats in Gemini CLI's format: cached input counts within the prompt,
    # thoughts and tool-use prompts apart.
    stats = {"models": {
        "gemini-2.5-pro": {"tokens": {"prompt": 1000, "cached": 400, "candidates": 50,
                                      "thoughts": 20, "tool": 5}},
        "gemini-2.5-flash-lite": {"tokens": {"prompt": 10, "candidates": 1}},
    }}  # fmt: skip
    (tmp_path / "stdout.log").write_text(json.dumps({"response": "Done.", "stats": stats}))
    assert GeminiCliAgent().parse(tmp_path) == (
        "Done.",
        {
            "input_tokens": 615,
            "output_tokens": 71,
            "cache_read_tokens": 400,
            "cache_write_tokens": 0,
        },
    )


# --------------------------------------------------------------------------------------------
# mini-swe-agent


def test_mini_swe_agent_needs_a_model_and_an_endpoint() -> None:
    with pytest.raises(ConfigError, match=r"needs a `model`.*ollama/qwen3-coder:30b"):
        MiniSweAgent()
    with pytest.raises(ConfigError, match=r"cannot tell which endpoint 'gpt-5' needs"):
        MiniSweAgent("gpt-5")
    with pytest.raises(ConfigError, match=r"hosted_vllm/my-model"):
        MiniSweAgent("hosted_vllm/my-model")
    agent = MiniSweAgent("hosted_vllm/my-model", base_url="http://10.1.2.3:8000/v1")
    assert agent.endpoint == "http://10.1.2.3:8000"
    with pytest.raises(ValidationError):
        MiniSweAgent("openai/gpt-5", step_limit=0)


def test_mini_swe_agent_argv_and_config(
    tmp_path: Path, fake_bin: Path, secrets: dict[str, str]
) -> None:
    session = make_session(tmp_path, prompt="Fix it.\nQuotes ' \" and $HOME stay as they are.")
    agent = MiniSweAgent(
        "openai/gpt-5",
        step_limit=30,
        model_kwargs={"temperature": "0", "reasoning_effort": "high", "top_p": 0.5},
    )
    invocation = agent.invocation(session)
    config = session.logdir / "bugbout-mini.yaml"
    assert invocation.argv == [
        str(fake_bin / "mini"), "-c", "mini.yaml", "-c", str(config),
        "-m", "openai/gpt-5", "--yolo", "--exit-immediately", "--cost-limit", "0",
        "-o", str(session.logdir / "trajectory.json"),
    ]  # fmt: skip
    assert invocation.stdin is None
    assert invocation.endpoints == ("https://api.openai.com",)
    assert yaml.safe_load(config.read_text()) == {
        "run": {"task": session.prompt},
        "agent": {"step_limit": 30},
        "model": {"model_kwargs": {"temperature": 0, "reasoning_effort": "high", "top_p": 0.5}},
    }
    text = MiniSweAgent("openai/gpt-5", text_actions=True).invocation(session).argv
    assert text[1:6] == ["-c", "mini_textbased.yaml", "--model-class", "litellm_textbased", "-c"]


def test_mini_swe_agent_endpoints_and_api_base(tmp_path: Path, fake_bin: Path) -> None:
    session = make_session(tmp_path)
    cases = {
        ("anthropic/claude-sonnet-4-5", None): ("https://api.anthropic.com", None),
        ("gemini/gemini-2.5-pro", None): ("https://generativelanguage.googleapis.com", None),
        ("ollama/qwen3-coder:30b", None): ("http://127.0.0.1:11434", "http://127.0.0.1:11434"),
        ("lm_studio/qwen3", None): ("http://127.0.0.1:1234", "http://127.0.0.1:1234/v1"),
        ("openai/scripted", "http://127.0.0.1:5000/v1"): (
            "http://127.0.0.1:5000",
            "http://127.0.0.1:5000/v1",
        ),
    }
    for (model, base_url), (endpoint, api_base) in cases.items():
        agent = MiniSweAgent(model, base_url=base_url)
        assert agent.invocation(session).endpoints == (endpoint,), model
        kwargs = yaml.safe_load((session.logdir / "bugbout-mini.yaml").read_text())["model"]
        assert kwargs["model_kwargs"].get("api_base") == api_base, model


def test_mini_swe_agent_environment(
    tmp_path: Path, fake_bin: Path, secrets: dict[str, str]
) -> None:
    session = make_session(tmp_path)
    env = environment(MiniSweAgent("openrouter/anthropic/claude-sonnet-4.5"), session)
    assert env["OPENROUTER_API_KEY"] == "sk-or-user"  # the provider's key
    assert env["ANTHROPIC_API_KEY"] == "sk-ant-user"  # the maker's
    for leaked in ("OPENAI_API_KEY", "GEMINI_API_KEY", "SECRET_TOKEN"):
        assert leaked not in env
    assert env["MSWEA_CONFIGURED"] == "true"
    assert env["MSWEA_GLOBAL_CONFIG_DIR"] == str(session.home / ".config" / "mini-swe-agent")
    assert env["MSWEA_SILENT_STARTUP"] == "1"
    assert env["MSWEA_COST_TRACKING"] == "ignore_errors"
    assert env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    local = environment(MiniSweAgent("ollama/qwen3-coder:30b"), session)
    assert not {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY"} & local.keys()


@pytest.mark.parametrize(
    ("model", "vendor"),
    [
        ("openai/gpt-5", "openai"),
        ("openai/scripted", "openai"),
        ("openai/qwen3-coder-480b", "alibaba"),  # an OpenAI-compatible server, Qwen's model
        ("anthropic/claude-sonnet-4-5", "anthropic"),
        ("gemini/gemini-2.5-pro", "google"),
        ("ollama/qwen3-coder:30b", "alibaba"),
        ("ollama/gpt-oss:20b", "openai"),
        ("ollama_chat/devstral", "mistral"),
        ("openrouter/meta-llama/llama-3.3-70b-instruct", "meta"),
        ("openrouter/anthropic/claude-sonnet-4.5", "anthropic"),
        ("deepseek/deepseek-chat", "deepseek"),
        ("groq/moonshotai/kimi-k2", None),
    ],
)
def test_mini_swe_agent_guesses_the_vendor(model: str, vendor: str | None) -> None:
    assert MiniSweAgent(model).vendor == vendor
    assert MiniSweAgent(model, vendor="acme").vendor == "acme"


def test_mini_swe_agent_executable_option(tmp_path: Path) -> None:
    mini = tmp_path / "venv" / "bin" / "mini"
    mini.parent.mkdir(parents=True)
    mini.write_text("#!/bin/sh\n")
    mini.chmod(0o755)
    agent = MiniSweAgent("openai/gpt-5", executable=str(mini))
    assert agent.executable == str(mini)
    assert agent.command() == str(mini)
    assert agent.invocation(make_session(tmp_path)).argv[0] == str(mini)
    # Where mini is installed does not make an attempt differ.
    assert agent.settings_key() == MiniSweAgent("openai/gpt-5").settings_key()
    assert "executable" not in agent.settings_key()


@pytest.mark.parametrize("sample", ["mini-swe-agent", "mini-swe-agent-textbased"])
def test_mini_swe_agent_parse_a_recorded_run(sample: str) -> None:
    summary, usage = MiniSweAgent("openai/scripted").parse(DATA / sample)
    assert summary == "Fixed add(): it subtracted instead of adding. Added tests/test_add.py."
    assert usage == {**NO_USAGE, "input_tokens": 400, "output_tokens": 80}


def test_mini_swe_agent_step_limit_is_not_an_error() -> None:
    agent = MiniSweAgent("openai/scripted")
    summary, usage = agent.parse(DATA / "mini-swe-agent-step-limit")
    assert summary == "mini-swe-agent stopped at its step limit without submitting."
    assert usage == {**NO_USAGE, "input_tokens": 100, "output_tokens": 20}
    assert not agent.hit_usage_limit(DATA / "mini-swe-agent-step-limit", 0)


def test_mini_swe_agent_crash_and_rate_limit(tmp_path: Path) -> None:
    # A synthetic trajectory in mini-swe-agent's format: an uncaught LiteLLM exception.
    exit_message = {
        "role": "exit",
        "content": "litellm.RateLimitError: quota exceeded",
        "extra": {"exit_status": "RateLimitError", "submission": "",
                  "exception_str": "litellm.RateLimitError: quota exceeded"},
    }  # fmt: skip
    trajectory = {"info": {"exit_status": "RateLimitError", "submission": ""},
                  "messages": [exit_message]}  # fmt: skip
    (tmp_path / "trajectory.json").write_text(json.dumps(trajectory))
    agent = MiniSweAgent("openai/gpt-5")
    assert agent.parse(tmp_path) == (
        "mini-swe-agent stopped (RateLimitError): litellm.RateLimitError: quota exceeded",
        NO_USAGE,
    )
    assert agent.hit_usage_limit(tmp_path, 1)
    exit_message["extra"] = {"exit_status": "AuthenticationError", "exception_str": "bad key"}
    trajectory["info"] = {"exit_status": "AuthenticationError"}
    (tmp_path / "trajectory.json").write_text(json.dumps(trajectory))
    assert not agent.hit_usage_limit(tmp_path, 1)
    assert agent.parse(tmp_path)[0] == "mini-swe-agent stopped (AuthenticationError): bad key"
    (tmp_path / "trajectory.json").unlink()
    (tmp_path / "stdout.log").write_text("Traceback ...\nImportError: no litellm\n")
    assert agent.parse(tmp_path) == ("Traceback ...\nImportError: no litellm", NO_USAGE)


# --------------------------------------------------------------------------------------------
# The real CLIs, end to end on a buggy checkout (installed by .ci/run)

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
