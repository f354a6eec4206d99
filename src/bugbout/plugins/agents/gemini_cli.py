"""The ``gemini-cli`` agent: Google's Gemini CLI, ``gemini --prompt`` headless.

Its user settings live in the agent's private ``GEMINI_CLI_HOME``: API-key auth pinned
(headless runs fail without it), auto-update, usage statistics and telemetry off, folder
trust off (the checkout is trusted, so ``--yolo`` holds). Web tools are denied twice:
excluded in the settings (a list a checkout's own ``.gemini/settings.json`` can only add
to) and by a user-tier policy (which checkout policies cannot override).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import field_validator

from bugbout import AgentPlugin, hookimpl
from bugbout.core.contract.transcript import Step, as_dict
from bugbout.core.plumbing.untrusted import read_untrusted
from bugbout.core.race.agents import (
    AgentOptions,
    CodingAgent,
    Invocation,
    Session,
    add_usage,
    as_int,
    check_url,
    origin,
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
JSON_STARTS = 20
"""How many lines that open a JSON object are tried, from the last: each try may read to
the end of the output, so an agent printing many would make the search quadratic."""
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_EXIT_CODE = re.compile(r"exitCode: (\d+)|\"code\": (\d+)")


class GeminiCliOptions(AgentOptions):
    """Options of the ``gemini-cli`` agent."""

    base_url: str | None = None
    """A Gemini API (``GOOGLE_GEMINI_BASE_URL``); Google's own by default."""

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        return check_url(url)


class GeminiCliAgent(CodingAgent):
    """Runs ``gemini -p "" --yolo --output-format json`` in the checkout, the prompt on
    standard input (which Gemini CLI puts before the empty ``-p`` prompt)."""

    harness = "gemini-cli"
    executable = "gemini"
    default_vendor = "google"
    Options = GeminiCliOptions
    options: GeminiCliOptions

    def invocation(self, session: Session) -> Invocation:
        config = session.home / ".gemini"
        (config / "policies").mkdir(parents=True, exist_ok=True)
        (config / "settings.json").write_text(json.dumps(SETTINGS, indent=2) + "\n")
        (config / "policies" / "bugbout.toml").write_text(POLICY)
        argv = [self.command(), "-p", "", "--yolo", "--output-format", "json"]
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
        """The JSON output's response and token stats; else what made Gemini CLI fail."""
        output = _json_object(_read(logdir / "stdout.log"))
        usage = _stats_usage(output.get("stats")) if output else usage_tokens()
        response = output.get("response") if output else None
        if isinstance(response, str) and response.strip():
            return response.strip()[-4000:], usage
        failure = _failure(output, _read(logdir / "stderr.log"))
        return failure or super().parse(logdir)[0], usage

    def hit_usage_limit(self, logdir: Path, exit_code: int | None) -> bool:
        """A quota error (HTTP 429, ``RESOURCE_EXHAUSTED``) in what Gemini CLI printed."""
        if not exit_code:
            return False
        text = _read(logdir / "stderr.log")[-20000:] + _read(logdir / "stdout.log")[-5000:]
        return bool(USAGE_LIMIT.search(text))


def _read(path: Path) -> str:
    return read_untrusted(path, tail=True) or ""


def _json_object(text: str) -> dict[str, Any]:
    """The last top-level JSON object in ``text`` (Gemini CLI may print lines before it)."""
    decoder = json.JSONDecoder()
    starts = [match.start() for match in re.finditer(r"^\{", text, re.M)]
    for start in reversed(starts[-JSON_STARTS:]):
        try:
            value, _ = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return {}


def _failure(output: dict[str, Any], stderr: str) -> str:
    """Why Gemini CLI failed, in one line, from its JSON error or its standard error."""
    error = output.get("error") or _json_object(stderr).get("error")
    stderr = _ANSI.sub("", stderr)
    message = ""
    code: int | None = None
    if isinstance(error, dict):
        message = str(error.get("message", "")).strip()
        if isinstance(error.get("code"), int):
            code = error["code"]
    if code is None:
        found = _EXIT_CODE.findall(stderr)
        if found:
            code = int(next(group for group in found[-1] if group))
    if not message:
        lines = [
            line.strip()
            for line in stderr.splitlines()
            if line.strip() and not line.startswith((" ", "\t", "}")) and "YOLO mode" not in line
        ]
        message = lines[-1] if lines else ""
    if not message and code is None:
        return ""
    meaning = f" ({EXIT_CODES[code]}, exit {code})" if code in EXIT_CODES else ""
    message = " ".join(message.split())
    return f"Gemini CLI failed{meaning}: {message}".rstrip(": ")[:2000]


def _stats_usage(stats: Any) -> dict[str, int]:
    """Tokens over every model (side requests included): Gemini counts cached input
    within the prompt, and thoughts and tool-use prompts apart."""
    total = usage_tokens()
    models = stats.get("models") if isinstance(stats, dict) else None
    for model in models.values() if isinstance(models, dict) else ():
        tokens = model.get("tokens") if isinstance(model, dict) else None
        if not isinstance(tokens, dict):
            continue
        prompt, cached = as_int(tokens.get("prompt")), as_int(tokens.get("cached"))
        total = add_usage(
            total,
            usage_tokens(
                fresh=max(prompt - cached, 0) + as_int(tokens.get("tool")),
                output=as_int(tokens.get("candidates")) + as_int(tokens.get("thoughts")),
                cache_read=cached,
            ),
        )
    return total


def transcript(logdir: Path) -> list[Step]:
    """What the ``json`` output keeps of a session: the calls of each tool (how many, how
    many failed; it does not keep the commands) and the response as the final message,
    or what made Gemini CLI fail."""
    output = _json_object(_read(logdir / "stdout.log"))
    stats = as_dict(output.get("stats"))
    tools = as_dict(stats.get("tools"))
    by_name = as_dict(tools.get("byName"))
    steps = [
        Step(
            "tool",
            f"{name}: {as_int(calls.get('count'))} calls, {as_int(calls.get('fail'))} failed",
            failed=as_int(calls.get("fail")) > 0,
        )
        for name, calls in by_name.items()
        if isinstance(calls, dict)
    ]
    response = output.get("response")
    if isinstance(response, str) and response.strip():
        return [*steps, Step("final", response.strip())]
    failure = _failure(output, _read(logdir / "stderr.log"))
    return [*steps, Step("final", failure, failed=True)] if failure else steps


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
