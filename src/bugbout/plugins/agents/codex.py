"""The ``codex`` agent: OpenAI's Codex CLI, ``codex exec`` headless.

The user's config and rules are ignored, the session is ephemeral, and web search,
plugins, apps and analytics are off. The whole process runs in bugbout's sandbox, so
Codex's own sandbox is switched off (``danger-full-access``): bubblewrap cannot start
inside bubblewrap (``setting up uid map: Operation not permitted``), and every command
Codex runs is already confined with it.

With ``native`` (the team's ``~/.codex`` folder, or its AGENTS.md) the setup is copied
into the private ``CODEX_HOME`` and its ``config.toml`` and rules are read (the MCP
servers it declares start inside the sandbox); bugbout's own settings still override it.

Credentials: against OpenAI the built-in provider authenticates with ``CODEX_API_KEY``,
taken from ``OPENAI_API_KEY`` (Codex ignores that variable itself). With ``base-url``, a
``bugbout`` provider is configured that sends ``OPENAI_API_KEY``, if the agent gets one.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import field_validator

from bugbout.agents import (
    AgentPlugin,
    CodingAgent,
    Invocation,
    NativeAgentOptions,
    NativeSetup,
    Session,
    Step,
    add_usage,
    as_int,
    as_list,
    check_url,
    hookimpl,
    json_events,
    origin,
    read_untrusted,
    usage_tokens,
)

OPENAI_ENDPOINT = "https://api.openai.com"
LOCAL_PORTS = {"ollama": 11434, "lmstudio": 1234}
"""The port each local provider serves on by default."""
PROVIDER = "bugbout"
"""The name of the model provider configured for ``base-url``."""
USAGE_LIMIT = re.compile(r"usage limit|rate limit|quota|too many requests|\b429\b", re.I)
LAST_MESSAGE = "last.txt"
"""The file in the log folder Codex writes its last message to (``-o``)."""


class CodexOptions(NativeAgentOptions):
    """Options of the ``codex`` agent."""

    reasoning_effort: str | None = None
    """Passed through as ``model_reasoning_effort``, e.g. ``"high"``."""
    local_provider: Literal["ollama", "lmstudio"] | None = None
    """Run an open model on a local Ollama or LM Studio server (``codex --oss``)."""
    base_url: str | None = None
    """An OpenAI-compatible Responses API, e.g. ``http://127.0.0.1:8080/v1``; OpenAI's
    own by default (or the local provider's, with ``local-provider``)."""

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        return check_url(url)


class CodexAgent(CodingAgent):
    """Runs ``codex exec --json`` in the checkout, the prompt on standard input."""

    harness = "codex"
    executable = "codex"
    default_vendor = "openai"
    Options = CodexOptions
    options: CodexOptions

    def native_setup(self) -> NativeSetup:
        native = self.options.native or ""
        return NativeSetup.read(native, ".codex", self.instruction_file).declaring(
            "config.toml", "mcp_servers"
        )

    def invocation(self, session: Session) -> Invocation:
        options = self.options
        _codex_home(session).mkdir(parents=True, exist_ok=True)
        _scratch(session).mkdir(parents=True, exist_ok=True)
        user = [] if options.native else ["--ignore-user-config", "--ignore-rules"]
        argv = [
            self.command(), "exec", "--json",
            "-o", str(session.logdir / LAST_MESSAGE),
            "--skip-git-repo-check", "--ephemeral", *user,
            "-s", "danger-full-access",
        ]  # fmt: skip
        if self.model:
            argv += ["-m", self.model]
        if options.local_provider:
            argv += ["--oss", "--local-provider", options.local_provider]
        elif options.base_url:
            fields = {
                "name": PROVIDER,
                "base_url": options.base_url,
                "wire_api": "responses",
            }
            if self._key_reaches_agent():
                fields["env_key"] = "OPENAI_API_KEY"
            table = ", ".join(f"{key}={json.dumps(value)}" for key, value in fields.items())
            argv += ["-c", f"model_provider={PROVIDER}"]
            argv += ["-c", f"model_providers.{PROVIDER}={{{table}}}"]
        if options.reasoning_effort:
            argv += ["-c", f"model_reasoning_effort={json.dumps(options.reasoning_effort)}"]
        argv += [
            "-c", "web_search=disabled",
            "--disable", "plugins", "--disable", "apps", "--disable", "remote_plugin",
            "-c", "analytics.enabled=false",
            "-",  # the prompt, from standard input
        ]  # fmt: skip
        return Invocation(argv, stdin=session.prompt, endpoints=(self.endpoint,))

    @property
    def endpoint(self) -> str:
        """The origin of the model endpoint the agent reaches."""
        options = self.options
        if options.local_provider:
            return origin(self._local_base_url())
        return origin(options.base_url or OPENAI_ENDPOINT)

    def environment(self, session: Session) -> dict[str, str]:
        env = super().environment(session)
        env["CODEX_HOME"] = str(_codex_home(session))
        env["TMPDIR"] = str(_scratch(session))  # Codex refuses a CODEX_HOME inside TMPDIR
        options = self.options
        if options.local_provider:
            env["CODEX_OSS_BASE_URL"] = self._local_base_url()
        elif not options.base_url:
            key = os.environ.get("CODEX_API_KEY") if self.vendor == "openai" else None
            key = key or env.get("OPENAI_API_KEY")
            if key:
                env["CODEX_API_KEY"] = key
        env.update(self.options.env)
        return env

    def parse(self, logdir: Path) -> tuple[str, dict[str, int]]:
        """The last agent message and the tokens of every completed turn."""
        summary, usage = "", usage_tokens()
        errors = []
        for event in json_events(logdir / "stdout.log"):
            kind = event.get("type")
            item = event.get("item")
            if kind == "item.completed" and isinstance(item, dict):
                if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
                    summary = item["text"]
            elif kind == "turn.completed" and isinstance(event.get("usage"), dict):
                usage = add_usage(usage, _turn_usage(event["usage"]))
            elif kind in ("error", "turn.failed"):
                errors.append(_error_message(event))
        last = read_untrusted(logdir / LAST_MESSAGE) or ""
        summary = summary or last
        if not summary.strip() and errors:
            summary = f"Codex failed: {errors[-1]}"
        if not summary.strip():
            return super().parse(logdir)[0], usage
        return summary.strip()[-4000:], usage

    def hit_usage_limit(self, logdir: Path, exit_code: int | None) -> bool:
        """Codex's own error events say whether a usage or rate limit stopped it."""
        if not exit_code:
            return False
        errors = [
            _error_message(event)
            for event in json_events(logdir / "stdout.log")
            if event.get("type") in ("error", "turn.failed")
        ]
        if errors:
            return any(USAGE_LIMIT.search(message) for message in errors)
        return super().hit_usage_limit(logdir, exit_code)

    def _local_base_url(self) -> str:
        options = self.options
        if options.base_url:
            return options.base_url
        port = LOCAL_PORTS[options.local_provider or "ollama"]
        return f"http://127.0.0.1:{port}/v1"

    def _key_reaches_agent(self) -> bool:
        """Whether ``OPENAI_API_KEY`` will be in the agent's environment."""
        return "OPENAI_API_KEY" in self.options.env or (
            self.vendor == "openai" and "OPENAI_API_KEY" in os.environ
        )


def _codex_home(session: Session) -> Path:
    return session.home / ".codex"


def _scratch(session: Session) -> Path:
    return session.home / "tmp"


def _error_message(event: dict[str, Any]) -> str:
    error = event.get("error")
    if isinstance(error, dict):
        return str(error.get("message", ""))
    return str(event.get("message", ""))


def _turn_usage(usage: dict[str, Any]) -> dict[str, int]:
    """Codex's usage, whose input and output include cached input and reasoning."""
    total = as_int(usage.get("input_tokens"))
    cached = as_int(usage.get("cached_input_tokens"))
    written = as_int(usage.get("cache_write_input_tokens"))
    return usage_tokens(
        fresh=max(total - cached - written, 0),
        output=as_int(usage.get("output_tokens")),
        cache_read=cached,
        cache_write=written,
    )


def transcript(logdir: Path) -> list[Step]:
    """The steps of a ``--json`` log: each completed item (a command with its exit code,
    a file change, a tool call, what the agent said), its last message the final one,
    and any error event."""
    steps: list[Step] = []
    for event in json_events(logdir / "stdout.log"):
        item = event.get("item")
        if event.get("type") == "item.completed" and isinstance(item, dict):
            steps += _item_steps(item)
        elif event.get("type") in {"error", "turn.failed"}:
            steps.append(Step("message", _error_message(event), failed=True))
    last = max((i for i, step in enumerate(steps) if step.kind == "message"), default=None)
    if last is not None and not steps[last].failed:
        steps[last] = Step("final", steps[last].text)
    return steps


def _item_steps(item: dict[str, Any]) -> list[Step]:
    kind = item.get("type")
    if kind == "command_execution":
        code = item.get("exit_code")
        exit_code = code if isinstance(code, int) else None
        return [
            Step(
                "command",
                _unwrapped(str(item.get("command", ""))),
                str(item.get("aggregated_output", "")),
                exit_code,
                item.get("status") == "failed" or bool(exit_code),
            )
        ]
    if kind == "file_change":
        changes = as_list(item.get("changes"))
        failed = item.get("status") == "failed"
        return [
            Step("edit", str(change.get("path", "")), str(change.get("kind", "")), failed=failed)
            for change in changes
            if isinstance(change, dict)
        ]
    if kind == "agent_message" and str(item.get("text", "")).strip():
        return [Step("message", str(item["text"]))]
    if kind in {"mcp_tool_call", "web_search"}:
        return [Step("tool", str(item.get("tool") or item.get("query") or kind))]
    if kind == "error":
        return [Step("message", str(item.get("message", "")), failed=True)]
    return []  # reasoning, plans


def _unwrapped(command: str) -> str:
    """``/bin/bash -c 'pytest -q'`` as ``pytest -q``: the command the agent wrote."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if len(words) == 3 and words[0].endswith("sh") and words[1] in {"-c", "-lc"}:
        return words[2]
    return command


@hookimpl
def bugbout_transcript(agent: str, logdir: Path) -> list[Step] | None:
    return transcript(logdir) if agent == CodexAgent.harness else None


@hookimpl
def bugbout_agents() -> Iterator[AgentPlugin]:
    yield AgentPlugin(
        name=CodexAgent.harness,
        factory=CodexAgent.from_options,
        options=CodexOptions,
        description="OpenAI's Codex CLI (codex exec), user config ignored, web search off",
    )
