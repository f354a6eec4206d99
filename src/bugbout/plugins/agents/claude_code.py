"""The ``claude-code`` agent: Anthropic's Claude Code, ``claude --print`` headless.

Safe mode leaves out CLAUDE.md, skills, plugins, hooks and MCP servers, and only the
private config directory's settings are read (a checkout's ``.claude/settings.json``
could otherwise set the model or environment). The tools are the built-in file and
shell tools; web tools are disallowed. The whole process runs in bugbout's sandbox, so
permission prompts are bypassed (which Claude Code allows as root only with
``IS_SANDBOX=1``) and its telemetry, error reports and update checks are off.

With ``native`` (the team's ``~/.claude`` folder, or its CLAUDE.md) safe mode is off: the
setup is copied into the private config directory, and the MCP servers of its
``mcp.json`` are the only ones loaded (a checkout's ``.mcp.json`` stays out).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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
    as_dict,
    as_int,
    check_url,
    hookimpl,
    json_events,
    origin,
    tool_step,
    usage_tokens,
)

ANTHROPIC_ENDPOINT = "https://api.anthropic.com"
TOOLS = "Bash,Edit,Read,Write,Glob,Grep"
DISALLOWED_TOOLS = "WebSearch,WebFetch"
QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_UPDATES": "1",
    "DISABLE_GROWTHBOOK": "1",
}
"""Without these Claude Code looks up outside hosts on every run."""
EDITS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
"""Claude Code's tools that change a file."""
_EXIT_CODE = re.compile(r"^(?:Error: )?Exit code (-?\d+)")
USAGE_LIMIT = re.compile(
    r"usage limit|rate limit|hit your limit|limit reached|quota|\(429\)|too many requests", re.I
)


MCP_CONFIG = "mcp.json"
"""The file of a native setup that declares its MCP servers (``--mcp-config``)."""


class ClaudeCodeOptions(NativeAgentOptions):
    """Options of the ``claude-code`` agent."""

    effort: str | None = None
    """Claude Code's effort level, e.g. ``"high"``."""
    base_url: str | None = None
    """An Anthropic Messages API (``ANTHROPIC_BASE_URL``); Anthropic's own by default."""

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        return check_url(url)


class ClaudeCodeAgent(CodingAgent):
    """Runs ``claude -p --output-format stream-json`` in the checkout, the prompt on
    standard input."""

    harness = "claude-code"
    executable = "claude"
    default_vendor = "anthropic"
    instruction_file = "CLAUDE.md"
    Options = ClaudeCodeOptions
    options: ClaudeCodeOptions

    def native_setup(self) -> NativeSetup:
        native = self.options.native or ""
        return NativeSetup.read(native, ".claude", self.instruction_file).declaring(
            MCP_CONFIG, "mcpServers"
        )

    def invocation(self, session: Session) -> Invocation:
        options = self.options
        native = self.native()
        mode = ["--safe-mode"] if native is None else []
        if native is not None and MCP_CONFIG in native.files:
            mode = ["--mcp-config", str(session.home / native.folder / MCP_CONFIG)]
        argv = [
            self.command(), "-p",
            *mode, "--setting-sources", "user", "--strict-mcp-config",
            "--tools", TOOLS, "--disallowedTools", DISALLOWED_TOOLS,
            "--permission-mode", "bypassPermissions",
            "--output-format", "stream-json", "--verbose",
            "--no-session-persistence",
        ]  # fmt: skip
        if self.model:
            argv += ["--model", self.model]
        if options.effort:
            argv += ["--effort", options.effort]
        return Invocation(argv, stdin=session.prompt, endpoints=(self.endpoint,))

    @property
    def endpoint(self) -> str:
        """The origin of the model endpoint the agent reaches."""
        return origin(self.options.base_url or ANTHROPIC_ENDPOINT)

    def environment(self, session: Session) -> dict[str, str]:
        env = super().environment(session)
        env["CLAUDE_CONFIG_DIR"] = str(session.home / ".claude")
        env["IS_SANDBOX"] = "1"
        env.update(QUIET)
        if self.options.base_url:
            env["ANTHROPIC_BASE_URL"] = self.options.base_url
        env.update(self.options.env)
        return env

    def parse(self, logdir: Path) -> tuple[str, dict[str, int]]:
        """The result event's text and usage (every model's, if it lists them)."""
        result, said = _result(logdir / "stdout.log")
        if result is None:
            summary = said or super().parse(logdir)[0]
            return summary.strip()[-4000:], usage_tokens()
        text = result.get("result")
        summary = text if isinstance(text, str) and text.strip() else said
        return (summary or str(result.get("subtype", ""))).strip()[-4000:], _result_usage(result)

    def hit_usage_limit(self, logdir: Path, exit_code: int | None) -> bool:
        """The result event says whether a usage or rate limit stopped the run."""
        if not exit_code:
            return False
        result, _ = _result(logdir / "stdout.log")
        if result is None:
            return super().hit_usage_limit(logdir, exit_code)
        if not result.get("is_error"):
            return False
        return result.get("api_error_status") == 429 or bool(
            USAGE_LIMIT.search(str(result.get("result", "")))
        )


def _result(path: Path) -> tuple[dict[str, Any] | None, str]:
    """The last ``result`` event, and the last text the assistant said."""
    result: dict[str, Any] | None = None
    said = ""
    for event in json_events(path):
        if event.get("type") == "result":
            result = event
        elif event.get("type") == "assistant":
            message = event.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else ():
                if isinstance(block, dict) and block.get("type") == "text":
                    said = str(block.get("text", "")) or said
    return result, said


def _result_usage(result: dict[str, Any]) -> dict[str, int]:
    """Tokens from ``modelUsage`` (all models, side requests included), else ``usage``."""
    models = result.get("modelUsage")
    if isinstance(models, dict) and models:
        total = usage_tokens()
        for usage in models.values():
            if isinstance(usage, dict):
                total = add_usage(
                    total,
                    usage_tokens(
                        fresh=as_int(usage.get("inputTokens")),
                        output=as_int(usage.get("outputTokens")),
                        cache_read=as_int(usage.get("cacheReadInputTokens")),
                        cache_write=as_int(usage.get("cacheCreationInputTokens")),
                    ),
                )
        return total
    usage = result.get("usage")
    if not isinstance(usage, dict):
        return usage_tokens()
    return usage_tokens(
        fresh=as_int(usage.get("input_tokens")),
        output=as_int(usage.get("output_tokens")),
        cache_read=as_int(usage.get("cache_read_input_tokens")),
        cache_write=as_int(usage.get("cache_creation_input_tokens")),
    )


def transcript(logdir: Path) -> list[Step]:
    """The steps of a ``stream-json`` log: each tool call with its result (a Bash call a
    command with its exit code, an edit the file it changed), what the assistant said, and
    the result event's text as the final message."""
    steps: list[Step] = []
    calls: dict[str, dict[str, Any]] = {}
    for event in json_events(logdir / "stdout.log"):
        message = event.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and str(block.get("text", "")).strip():
                steps.append(Step("message", str(block["text"])))
            elif block.get("type") == "tool_use":
                calls[str(block.get("id"))] = block
            elif block.get("type") == "tool_result":
                call = calls.pop(str(block.get("tool_use_id")), {})
                steps.append(_tool_step(call, block))
        if event.get("type") == "result" and isinstance(event.get("result"), str):
            if steps and steps[-1] == Step("message", event["result"]):
                steps.pop()  # the final message, said once
            steps.append(Step("final", event["result"], failed=bool(event.get("is_error"))))
    return steps


def _tool_step(call: dict[str, Any], result: dict[str, Any]) -> Step:
    """A tool call and its result as one step."""
    name = str(call.get("name", "tool"))
    arguments = as_dict(call.get("input"))
    output = _text(result.get("content"))
    failed = bool(result.get("is_error"))
    if name == "Bash":
        code = _EXIT_CODE.match(output)
        exit_code = int(code.group(1)) if code else (1 if failed else 0)
        return Step("command", str(arguments.get("command", "")), output, exit_code, failed)
    return tool_step(name, arguments, output, failed=failed, edits=EDITS)


def _text(content: Any) -> str:
    """A tool result's content: a string, or text blocks."""
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content or "")


@hookimpl
def bugbout_transcript(agent: str, logdir: Path) -> list[Step] | None:
    return transcript(logdir) if agent == ClaudeCodeAgent.harness else None


@hookimpl
def bugbout_agents() -> Iterator[AgentPlugin]:
    yield AgentPlugin(
        name=ClaudeCodeAgent.harness,
        factory=ClaudeCodeAgent.from_options,
        options=ClaudeCodeOptions,
        description="Anthropic's Claude Code (claude -p) in safe mode, web tools disallowed",
    )
