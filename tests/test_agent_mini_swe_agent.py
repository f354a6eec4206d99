"""The mini-swe-agent adapter: its command line, config, endpoints and environment, and its
log parsing on logs recorded from the real CLI (``tests/data/agents/``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from agent_sessions import DATA, NO_USAGE, environment, make_session
from bugbout.core.contract.errors import ConfigError
from bugbout.plugins.agents.mini_swe_agent import MiniSweAgent


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
