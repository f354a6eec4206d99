"""The ``tinyagent`` adapter: bugbout's agent contract, and what it makes of tinyagent."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, ClassVar

import pytest
from bugbout.core.contract.manager import make_plugins
from bugbout.core.race.agents import CodingAgent
from bugbout.testing.suites import AgentSuite

from bugbout_tinyagent.plugin import TinyAgent


class TestTinyAgent(AgentSuite):
    plugin = "tinyagent"
    options: ClassVar[dict[str, Any]] = {"base-url": "http://127.0.0.1:8000/v1", "max-steps": 5}
    credentials = ("OPENAI_API_KEY",)  # its `api-key-env`, whoever made the model

    def test_declares_its_endpoint_and_reads_the_prompt_on_stdin(
        self, agent: Any, session: Any
    ) -> None:
        invocation = agent.invocation(session)
        assert invocation.endpoints == ("http://127.0.0.1:8000",)
        assert invocation.stdin == session.prompt
        assert invocation.confined
        assert invocation.argv[1:] == [
            "--json", "--base-url", "http://127.0.0.1:8000/v1",
            "--max-steps", "5", "--api-key-env", "OPENAI_API_KEY",
        ]  # fmt: skip


def test_is_installed_with_its_command_line() -> None:
    agent = make_plugins().create("agent", "tinyagent")
    assert isinstance(agent, CodingAgent)
    help_text = subprocess.run(
        [agent.command(), "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "--base-url" in help_text


def test_a_bad_base_url_is_a_config_error() -> None:
    from bugbout.core.contract.errors import ConfigError

    with pytest.raises(ConfigError, match="base-url"):
        make_plugins().create("agent", "tinyagent", {"base-url": "ftp://example.com"})


def test_parse_reads_the_summary_and_tokens(tmp_path: Path) -> None:
    usage = {"prompt_tokens": 300, "completion_tokens": 60}
    events = [
        {"type": "command", "command": "ls", "output": "calc.py", "usage": usage},
        {"type": "done", "text": "Fixed it.", "usage": usage},
    ]
    (tmp_path / "stdout.log").write_text("".join(json.dumps(e) + "\n" for e in events))
    summary, tokens = TinyAgent(base_url="http://127.0.0.1:8000/v1").parse(tmp_path)
    assert summary == "Fixed it."
    assert tokens["input_tokens"] == 300
    assert tokens["output_tokens"] == 60


def test_parse_tells_why_it_stopped_early(tmp_path: Path) -> None:
    (tmp_path / "stdout.log").write_text("")
    (tmp_path / "stderr.log").write_text("$ ls\ntinyagent: the model answered 429 Too Many\n")
    agent = TinyAgent()
    summary, _ = agent.parse(tmp_path)
    assert summary == "tinyagent: the model answered 429 Too Many"
    assert agent.hit_usage_limit(tmp_path, 1)
