"""The ``gemini-cli`` agent: Google's Gemini CLI, ``gemini --prompt`` headless.

Its user settings live in the agent's private ``GEMINI_CLI_HOME``: API-key auth pinned
(headless runs fail without it), auto-update, usage statistics and telemetry off, folder
trust off (the checkout is trusted, so ``--yolo`` holds). Web tools are denied twice:
excluded in the settings (a list a checkout's own ``.gemini/settings.json`` can only add
to) and by a user-tier policy (which checkout policies cannot override).

With ``native`` (the team's ``~/.gemini`` folder, or its GEMINI.md) the setup is copied
into that HOME first; bugbout's settings are laid over the team's ``settings.json`` (its
MCP servers start inside the sandbox, its excluded tools are kept).
"""

from __future__ import annotations

import json
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
    json_value,
    origin,
    read_untrusted,
    tool_step,
    usage_tokens,
)

GEMINI_ENDPOINT = "https://generativelanguage.googleapis.com"
WEB_TOOLS = ("web_fetch", "google_web_search")
SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "tools": {"exclude": list(WEB_TOOLS)},
}
POLICY = (
    "# Written by bugbout: no web tools, whatever the checkout's settings say.\n"
    "[[rule]]\n"
    f"toolName = {json.dumps(list(WEB_TOOLS))}\n"
    'decision = "deny"\n'
    "priority = 999\n"
)
EXIT_CODES = {
    41: "authentication failed (is GEMINI_API_KEY set?)",
    42: "the input was refused",
    44: "its sandbox failed",
    52: "its configuration is invalid",
    53: "it reached its session turn limit",
    54: "a tool failed fatally",
    55: "the workspace is not trusted",
    130: "it was cancelled",
}
"""Gemini CLI's exit codes, as it defines them."""
USAGE_LIMIT = re.compile(
    r"RESOURCE_EXHAUSTED|status 429|\b429\b.*(quota|exhausted|rate)|exhausted your (daily )?quota"
    r"|quota exceeded|usage limit|rate limit",
    re.I,
)
EDITS = frozenset({"replace", "write_file"})
"""Gemini CLI's tools that change a file."""
NOISE = ("Warning:", "YOLO mode", "Approval mode", "Ripgrep is not available")
"""Lines Gemini CLI prints on standard error on every run."""
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_EXIT_CODE = re.compile(r"exitCode: (\d+)|\"code\": (\d+)")


class GeminiCliOptions(NativeAgentOptions):
    """Options of the ``gemini-cli`` agent."""

    base_url: str | None = None
    """A Gemini API (``GOOGLE_GEMINI_BASE_URL``); Google's own by default."""

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        return check_url(url)


class GeminiCliAgent(CodingAgent):
    """Runs ``gemini -p "" --yolo --output-format stream-json`` in the checkout, the prompt on
    standard input (which Gemini CLI puts before the empty ``-p`` prompt)."""

    harness = "gemini-cli"
    executable = "gemini"
    default_vendor = "google"
    instruction_file = "GEMINI.md"
    Options = GeminiCliOptions
    options: GeminiCliOptions

    def native_setup(self) -> NativeSetup:
        native = self.options.native or ""
        return NativeSetup.read(native, ".gemini", self.instruction_file).declaring(
            "settings.json", "mcpServers"
        )

    def invocation(self, session: Session) -> Invocation:
        config = session.home / ".gemini"
        (config / "policies").mkdir(parents=True, exist_ok=True)
        team = json_value(_read(config / "settings.json")) if self.options.native else None
        settings = _laid_over(team if isinstance(team, dict) else {}, SETTINGS)
        (config / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")
        (config / "policies" / "bugbout.toml").write_text(POLICY)
        argv = [self.command(), "-p", "", "--yolo", "--output-format", "stream-json"]
        if self.model:
            argv += ["-m", self.model]
        return Invocation(argv, stdin=session.prompt, endpoints=(self.endpoint,))

    @property
    def endpoint(self) -> str:
        """The origin of the model endpoint the agent reaches."""
        return origin(self.options.base_url or GEMINI_ENDPOINT)

    def environment(self, session: Session) -> dict[str, str]:
        env = super().environment(session)
        env["GEMINI_CLI_HOME"] = str(session.home)
        env["GEMINI_TELEMETRY_ENABLED"] = "false"
        env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
        env["NO_BROWSER"] = "1"
        if self.options.base_url:
            env["GOOGLE_GEMINI_BASE_URL"] = self.options.base_url
        env.update(self.options.env)
        return env

    def parse(self, logdir: Path) -> tuple[str, dict[str, int]]:
        """The final message and the result event's token stats; else what made Gemini
        CLI fail."""
        steps = transcript(logdir)
        usage = _stats_usage(_result(logdir).get("stats"))
        if steps and steps[-1].kind == "final":
            return steps[-1].text[-4000:], usage
        return super().parse(logdir)[0], usage

    def hit_usage_limit(self, logdir: Path, exit_code: int | None) -> bool:
        """A quota error (HTTP 429, ``RESOURCE_EXHAUSTED``) in what Gemini CLI printed."""
        if not exit_code:
            return False
        text = _read(logdir / "stderr.log")[-20000:] + _read(logdir / "stdout.log")[-5000:]
        return bool(USAGE_LIMIT.search(text))


def _laid_over(team: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    """bugbout's settings over the team's, table by table; excluded tools are both's."""
    merged = dict(team)
    for key, value in ours.items():
        below = merged.get(key)
        if isinstance(value, dict) and isinstance(below, dict):
            merged[key] = _laid_over(below, value)
        elif key == "exclude" and isinstance(below, list):
            merged[key] = [*below, *(tool for tool in value if tool not in below)]
        else:
            merged[key] = value
    return merged


def _read(path: Path) -> str:
    return read_untrusted(path, tail=True) or ""


def _result(logdir: Path) -> dict[str, Any]:
    """The last ``result`` event of the stream (none when Gemini CLI failed to start)."""
    found: dict[str, Any] = {}
    for event in json_events(logdir / "stdout.log"):
        if event.get("type") == "result":
            found = event
    return found


def _failure(result: dict[str, Any], stderr: str) -> str:
    """Why Gemini CLI failed, in one line: the result event's error, else the last lines
    of its standard error (after its warnings)."""
    error = as_dict(result.get("error"))
    message = str(error.get("message", "")).strip()
    lines = _ANSI.sub("", stderr).splitlines()
    found = _EXIT_CODE.findall(stderr)
    code = int(next(group for group in found[-1] if group)) if found else None
    if not message:
        said: list[str] = []
        for line in lines:
            if line.startswith(NOISE):
                said = []
            elif line.strip() and not line.startswith((" ", "\t", "}")):
                said.append(line.strip())
        message = " ".join(said)
    if not message and code is None:
        return ""
    meaning = f" ({EXIT_CODES[code]}, exit {code})" if code in EXIT_CODES else ""
    message = " ".join(message.split())
    return f"Gemini CLI failed{meaning}: {message}".rstrip(": ")[:2000]


def _stats_usage(stats: Any) -> dict[str, int]:
    """Tokens over every model (side requests included). The stream counts cached input
    within ``input_tokens`` and leaves thoughts and tool-use prompts out of
    ``output_tokens`` (only ``total_tokens`` has them): they count as output here."""
    total = usage_tokens()
    for model in as_dict(as_dict(stats).get("models")).values():
        tokens = as_dict(model)
        prompt, cached = as_int(tokens.get("input_tokens")), as_int(tokens.get("cached"))
        output = max(
            as_int(tokens.get("total_tokens")) - prompt, as_int(tokens.get("output_tokens"))
        )
        total = add_usage(
            total,
            usage_tokens(fresh=max(prompt - cached, 0), output=output, cache_read=cached),
        )
    return total


def transcript(logdir: Path) -> list[Step]:
    """The steps of a ``stream-json`` log: what the model said between tool calls, each
    tool call with its result (a shell call a command, an edit the file it changed), and
    what it said last as the final message, or what made Gemini CLI fail. The stream
    does not report a command's exit code."""
    steps: list[Step] = []
    calls: dict[str, dict[str, Any]] = {}
    said = ""
    result: dict[str, Any] = {}
    for event in json_events(logdir / "stdout.log"):
        kind = event.get("type")
        if kind == "message" and event.get("role") == "assistant":
            text = str(event.get("content", ""))
            said = said + text if event.get("delta") else text
        elif kind == "tool_use":
            if said.strip():
                steps.append(Step("message", said.strip()))
            said = ""
            calls[str(event.get("tool_id"))] = event
        elif kind == "tool_result":
            steps.append(_tool_step(calls.pop(str(event.get("tool_id")), {}), event))
        elif kind == "result":
            result = event
    if result.get("status") != "error" and said.strip():
        return [*steps, Step("final", said.strip())]
    failure = _failure(result, _read(logdir / "stderr.log"))
    if said.strip():
        steps.append(Step("message", said.strip()))
    return [*steps, Step("final", failure, failed=True)] if failure else steps


def _tool_step(call: dict[str, Any], result: dict[str, Any]) -> Step:
    """A tool call and its result as one step."""
    name = str(call.get("tool_name", "tool"))
    arguments = as_dict(call.get("parameters"))
    error = as_dict(result.get("error"))
    output = str(result.get("output") or error.get("message") or "")
    failed = result.get("status") == "error"
    if name == "run_shell_command":
        return Step("command", str(arguments.get("command", "")), output, failed=failed)
    return tool_step(name, arguments, output, failed=failed, edits=EDITS)


@hookimpl
def bugbout_transcript(agent: str, logdir: Path) -> list[Step] | None:
    return transcript(logdir) if agent == GeminiCliAgent.harness else None


@hookimpl
def bugbout_agents() -> Iterator[AgentPlugin]:
    yield AgentPlugin(
        name=GeminiCliAgent.harness,
        factory=GeminiCliAgent.from_options,
        options=GeminiCliOptions,
        description="Google's Gemini CLI (gemini -p) in auto-approve mode, web tools denied",
    )
