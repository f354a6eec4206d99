"""The ``tinyagent`` agent: bugbout's adapter for the ``tinyagent`` command line.

bugbout starts ``tinyagent --json`` in the checkout with the prompt on standard input;
``tinyagent`` reaches the model at ``base-url`` (declared as the invocation's endpoint, so
it gets through bugbout's sandbox, and nothing else does) and runs the model's shell
commands in the checkout. The summary and the token usage come from its JSON lines.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bugbout import AgentOptions, AgentPlugin, CodingAgent, Invocation, Session, hookimpl
from bugbout.core.contract.errors import ConfigError
from bugbout.core.race.agents import as_int, check_url, json_events, origin, usage_tokens
from pydantic import Field, field_validator

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class TinyAgentOptions(AgentOptions):
    """Options of the ``tinyagent`` agent (``contestants: {tiny: {agent: tinyagent, ...}}``)."""

    base_url: str = DEFAULT_BASE_URL
    """The OpenAI-compatible API, e.g. ``http://127.0.0.1:8000/v1`` for a local server."""
    api_key_env: str = "OPENAI_API_KEY"
    """The variable holding the API key; it alone of the user's keys reaches the agent."""
    max_steps: int = Field(default=50, ge=1)
    """The most model turns per task."""
    executable: str | None = None
    """The ``tinyagent`` program; found on ``PATH``, else next to bugbout's Python."""

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        return check_url(url) or DEFAULT_BASE_URL


class TinyAgent(CodingAgent):
    """Runs ``tinyagent --json`` in the checkout, the prompt on standard input."""

    harness = "tinyagent"
    Options = TinyAgentOptions
    options: TinyAgentOptions

    @property
    def executable(self) -> str:
        return str(self.options.executable or "tinyagent")

    def command(self) -> str:
        """``tinyagent`` on ``PATH``, else the one installed with this package."""
        beside_python = str(Path(sys.executable).parent)
        found = shutil.which(self.executable) or shutil.which(self.executable, path=beside_python)
        if found is None:
            raise ConfigError(
                f"agent {self.name!r} needs {self.executable!r}, which is not on PATH; "
                "install it with `pip install bugbout-tinyagent`"
            )
        return found

    def invocation(self, session: Session) -> Invocation:
        options = self.options
        argv = [
            self.command(), "--json", "--base-url", options.base_url,
            "--max-steps", str(options.max_steps), "--api-key-env", options.api_key_env,
        ]  # fmt: skip
        if self.model:
            argv += ["--model", self.model]
        return Invocation(argv, stdin=session.prompt, endpoints=(origin(options.base_url),))

    def environment(self, session: Session) -> dict[str, str]:
        env = super().environment(session)
        key = self.options.api_key_env
        if key in os.environ and key not in self.options.env:
            env[key] = os.environ[key]
        return env

    def parse(self, logdir: Path) -> tuple[str, dict[str, int]]:
        """The model's last answer and the tokens of every turn (from the last event)."""
        summary, usage = "", usage_tokens()
        for event in json_events(logdir / "stdout.log"):
            counts = event.get("usage")
            if isinstance(counts, dict):
                usage = usage_tokens(
                    fresh=as_int(counts.get("prompt_tokens")),
                    output=as_int(counts.get("completion_tokens")),
                )
            if event.get("type") == "done" and isinstance(event.get("text"), str):
                summary = event["text"]
        if not summary.strip():  # it stopped early: its last complaint says why
            stderr = logdir / "stderr.log"
            text = stderr.read_text(errors="replace") if stderr.exists() else ""
            summary = (text.strip().splitlines() or [""])[-1]
        return summary[-4000:], usage

    def settings_key(self) -> dict[str, Any]:
        """Where ``tinyagent`` is installed does not change an attempt."""
        key = super().settings_key()
        key.pop("executable", None)
        return key


@hookimpl
def bugbout_agents() -> Iterator[AgentPlugin]:
    yield AgentPlugin(
        name="tinyagent",
        factory=TinyAgent.from_options,
        options=TinyAgentOptions,
        description="tinyagent: a tiny shell-tool agent on any OpenAI-compatible API",
    )
