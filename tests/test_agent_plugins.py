"""The agent plugins: their packaged options, how they build adapters, each adapter's
names and executable, and a missing CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agent_sessions import make_session
from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.manager import Plugins, make_plugins
from bugbout.core.race.agents import CodingAgent
from bugbout.plugins.agents import claude_code, codex, gemini_cli, mini_swe_agent
from bugbout.plugins.agents.claude_code import ClaudeCodeAgent
from bugbout.plugins.agents.codex import CodexAgent
from bugbout.plugins.agents.gemini_cli import GeminiCliAgent
from bugbout.plugins.agents.mini_swe_agent import MiniSweAgent

CONF = Path(__file__).parents[1] / "src" / "bugbout" / "conf" / "contestant"
MODULES = {
    "codex": codex,
    "claude-code": claude_code,
    "gemini-cli": gemini_cli,
    "mini-swe-agent": mini_swe_agent,
}


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
