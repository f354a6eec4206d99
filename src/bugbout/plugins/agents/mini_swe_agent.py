"""The ``mini-swe-agent`` agent: the SWE-bench team's minimal agent, on any LiteLLM model.

``mini`` runs with its built-in ``mini.yaml`` (``mini_textbased.yaml`` for text actions),
in yolo mode, exiting as soon as the model submits. The task, the step limit and the
model arguments go in a config file in the log directory, so no prompt is too long for
the command line. Its global config directory is private, LiteLLM's price map is the
packaged one (else it is fetched at import), and cost tracking never stops a run.

The endpoint is ``base-url``'s, else the LiteLLM provider's own (``openai/...``,
``anthropic/...``, ``ollama/...``); the credentials it passes are the provider's key as
well as the model maker's.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from bugbout.agents import (
    AgentOptions,
    AgentPlugin,
    CodingAgent,
    ConfigError,
    Invocation,
    Session,
    Step,
    add_usage,
    as_dict,
    as_int,
    as_list,
    check_url,
    guess_vendor,
    hookimpl,
    json_value,
    origin,
    read_untrusted,
    usage_tokens,
)

CONFIG = "bugbout-mini.yaml"
TRAJECTORY = "trajectory.json"
PROVIDERS: dict[str, tuple[str, str | None, tuple[str, ...]]] = {
    "openai": ("https://api.openai.com", "openai", ("OPENAI_API_KEY",)),
    "anthropic": ("https://api.anthropic.com", "anthropic", ("ANTHROPIC_API_KEY",)),
    "gemini": (
        "https://generativelanguage.googleapis.com",
        "google",
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    ),
    "mistral": ("https://api.mistral.ai", "mistral", ("MISTRAL_API_KEY",)),
    "deepseek": ("https://api.deepseek.com", "deepseek", ("DEEPSEEK_API_KEY",)),
    "xai": ("https://api.x.ai", "xai", ("XAI_API_KEY",)),
    "groq": ("https://api.groq.com", None, ("GROQ_API_KEY",)),
    "openrouter": ("https://openrouter.ai", None, ("OPENROUTER_API_KEY",)),
    "ollama": ("http://127.0.0.1:11434", None, ()),
    "ollama_chat": ("http://127.0.0.1:11434", None, ()),
    "lm_studio": ("http://127.0.0.1:1234/v1", None, ()),
}
"""LiteLLM providers bugbout knows: default API base, the maker of their models when
they make them, and the variables with their credentials."""
LOCAL_PROVIDERS = ("ollama", "ollama_chat", "lm_studio")
"""Providers whose default API base is set explicitly, so it is the endpoint exactly."""
USAGE_LIMIT = re.compile(r"RateLimitError|rate limit|quota|usage limit|\b429\b", re.I)


class MiniSweAgentOptions(AgentOptions):
    """Options of the ``mini-swe-agent`` agent."""

    text_actions: bool = False
    """Actions as fenced code in the model's text, for servers whose tool calls are
    unreliable (``mini_textbased.yaml``)."""
    step_limit: int = Field(default=75, ge=1)
    """The most model calls per task."""
    model_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Extra LiteLLM arguments, e.g. ``{temperature: 0}``."""
    base_url: str | None = None
    """The model's API base (LiteLLM's ``api_base``), e.g. ``http://127.0.0.1:8000/v1``."""
    executable: str | None = None
    """The ``mini`` program (a path, e.g. in its own virtual environment); found on
    ``PATH`` by default."""

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        return check_url(url)


class MiniSweAgent(CodingAgent):
    """Runs ``mini --yolo --exit-immediately`` in the checkout."""

    harness = "mini-swe-agent"
    Options = MiniSweAgentOptions
    options: MiniSweAgentOptions

    def __init__(self, model: str | None = None, **options: Any) -> None:
        super().__init__(model, **options)
        if not self.model:
            raise ConfigError(
                "mini-swe-agent needs a `model`: a LiteLLM name with its provider, such as "
                "`anthropic/claude-sonnet-4-5`, `openai/gpt-5` or `ollama/qwen3-coder:30b`"
            )
        if not self.options.base_url and self.provider not in PROVIDERS:
            raise ConfigError(
                f"mini-swe-agent cannot tell which endpoint {self.model!r} needs: name the "
                f"model with one of the providers {', '.join(sorted(PROVIDERS))} (e.g. "
                "`openai/gpt-5`), or set `base-url` to its API"
            )

    @property
    def executable(self) -> str:
        return str(self.options.executable or "mini")

    @property
    def provider(self) -> str:
        """The LiteLLM provider: the model name's first part."""
        return str(self.model).partition("/")[0] if "/" in str(self.model) else ""

    @property
    def vendor(self) -> str | None:
        """Who made the model: from its name without the provider, else the provider's."""
        if self.options.vendor:
            return str(self.options.vendor)
        name = str(self.model or "")
        if self.provider:
            name = name.partition("/")[2]
        known = PROVIDERS.get(self.provider)
        return guess_vendor(name) or (known[1] if known else None)

    def invocation(self, session: Session) -> Invocation:
        options = self.options
        config = session.logdir / CONFIG
        if "=" in str(config):  # mini reads `-c a=b` as a setting, not a file
            raise ConfigError(f"mini-swe-agent cannot be given a config file named {config}")
        model_kwargs = {key: _scalar(value) for key, value in options.model_kwargs.items()}
        api_base = self.api_base
        if api_base:
            model_kwargs["api_base"] = api_base
        settings = {
            "run": {"task": session.prompt},
            "agent": {"step_limit": options.step_limit},
            "model": {"model_kwargs": model_kwargs},
        }
        config.write_text(json.dumps(settings, indent=2) + "\n")  # JSON is YAML
        builtin = ["-c", "mini.yaml"]
        if options.text_actions:
            builtin = ["-c", "mini_textbased.yaml", "--model-class", "litellm_textbased"]
        argv = [
            self.command(), *builtin, "-c", str(config),
            "-m", str(self.model), "--yolo", "--exit-immediately", "--cost-limit", "0",
            "-o", str(session.logdir / TRAJECTORY),
        ]  # fmt: skip
        return Invocation(argv, endpoints=(self.endpoint,))

    @property
    def api_base(self) -> str | None:
        """The API base mini-swe-agent is given, if not LiteLLM's own default."""
        if self.options.base_url:
            return str(self.options.base_url)
        if self.provider in LOCAL_PROVIDERS:
            return PROVIDERS[self.provider][0]
        return None

    @property
    def endpoint(self) -> str:
        """The origin of the model endpoint the agent reaches."""
        return origin(self.api_base or PROVIDERS[self.provider][0])

    def environment(self, session: Session) -> dict[str, str]:
        env = super().environment(session)
        env["MSWEA_CONFIGURED"] = "true"
        env["MSWEA_GLOBAL_CONFIG_DIR"] = str(session.home / ".config" / "mini-swe-agent")
        env["MSWEA_SILENT_STARTUP"] = "1"
        env["MSWEA_COST_TRACKING"] = "ignore_errors"
        env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        for variable in PROVIDERS.get(self.provider, ("", None, ()))[2]:
            if variable in os.environ:
                env[variable] = os.environ[variable]
        env.update(self.options.env)
        return env

    def parse(self, logdir: Path) -> tuple[str, dict[str, int]]:
        """The submission (or why there is none) and the tokens of every model call."""
        trajectory = _trajectory(logdir)
        if trajectory is None:
            return super().parse(logdir)[0], usage_tokens()
        info = trajectory.get("info")
        info = info if isinstance(info, dict) else {}
        status = str(info.get("exit_status") or "")
        submission = str(info.get("submission") or "").strip()
        if submission:
            summary = submission
        elif status == "LimitsExceeded":
            summary = "mini-swe-agent stopped at its step limit without submitting."
        else:
            problem = str(_last_extra(trajectory).get("exception_str") or "").strip()
            summary = f"mini-swe-agent stopped ({status or 'no exit status'})"
            summary += f": {problem}" if problem else "."
        return summary[-4000:], _usage(trajectory)

    def hit_usage_limit(self, logdir: Path, exit_code: int | None) -> bool:
        """Whether the exception that stopped it was a rate or quota limit."""
        if not exit_code:
            return False
        trajectory = _trajectory(logdir)
        if trajectory is None:
            return super().hit_usage_limit(logdir, exit_code)
        info = trajectory.get("info")
        status = str(info.get("exit_status", "")) if isinstance(info, dict) else ""
        problem = str(_last_extra(trajectory).get("exception_str", ""))
        return bool(USAGE_LIMIT.search(f"{status} {problem}"))

    def settings_key(self) -> dict[str, Any]:
        """Where ``mini`` is installed does not change an attempt."""
        key = super().settings_key()
        key.pop("executable", None)
        return key


def _trajectory(logdir: Path) -> dict[str, Any] | None:
    text = read_untrusted(logdir / TRAJECTORY)
    data = json_value(text) if text is not None else None
    return data if isinstance(data, dict) else None


SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
"""The command by which mini-swe-agent submits (its output is the final message)."""
_THOUGHT = re.compile(r"```.*?```", re.S)


def transcript(logdir: Path) -> list[Step]:
    """The steps of a trajectory: what the model said (its thought, commands taken out),
    each command it ran with its return code and output, and the submission or the
    exit status as the final message."""
    trajectory = _trajectory(logdir)
    if trajectory is None:
        return []
    steps: list[Step] = []
    pending: list[str] = []
    messages = trajectory.get("messages")
    for message in messages[2:] if isinstance(messages, list) else ():  # after the prompt
        if not isinstance(message, dict):
            continue
        extra = as_dict(message.get("extra"))
        if message.get("role") == "assistant":
            said = _THOUGHT.sub("", str(message.get("content") or "")).strip()
            if said:
                steps.append(Step("message", said))
            actions = as_list(extra.get("actions"))
            pending += [str(a.get("command", "")) for a in actions if isinstance(a, dict)]
        elif message.get("role") == "exit":
            status = str(extra.get("exit_status", ""))
            text = str(message.get("content") or "").strip() or f"stopped ({status})"
            steps.append(Step("final", text, failed=status != "Submitted"))
        elif "returncode" in extra and pending:
            command = pending.pop(0)
            code = extra.get("returncode")
            exit_code = code if isinstance(code, int) else None
            if SUBMIT not in command:
                output = str(extra.get("raw_output", "")) + str(extra.get("exception_info", ""))
                steps.append(Step("command", command, output, exit_code, bool(exit_code)))
    return steps


def _last_extra(trajectory: dict[str, Any]) -> dict[str, Any]:
    messages = trajectory.get("messages")
    if isinstance(messages, list) and messages and isinstance(messages[-1], dict):
        extra = messages[-1].get("extra")
        if isinstance(extra, dict):
            return extra
    return {}


def _usage(trajectory: dict[str, Any]) -> dict[str, int]:
    """Tokens over every model response kept in the trajectory (LiteLLM's usage, whose
    prompt tokens include the cached ones)."""
    total = usage_tokens()
    messages = trajectory.get("messages")
    for message in messages if isinstance(messages, list) else ():
        extra = message.get("extra") if isinstance(message, dict) else None
        response = extra.get("response") if isinstance(extra, dict) else None
        usage = response.get("usage") if isinstance(response, dict) else None
        if not isinstance(usage, dict):
            continue
        details = usage.get("prompt_tokens_details")
        cached = as_int(details.get("cached_tokens")) if isinstance(details, dict) else 0
        written = as_int(usage.get("cache_creation_input_tokens"))
        total = add_usage(
            total,
            usage_tokens(
                fresh=max(as_int(usage.get("prompt_tokens")) - cached - written, 0),
                output=as_int(usage.get("completion_tokens")),
                cache_read=cached,
                cache_write=written,
            ),
        )
    return total


def _scalar(value: Any) -> Any:
    """A model argument as ``mini -c key=value`` would read it: ``"0"`` is the number 0."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        if isinstance(parsed, int | float | bool) or parsed is None:
            return parsed
    return value


@hookimpl
def bugbout_transcript(agent: str, logdir: Path) -> list[Step] | None:
    return transcript(logdir) if agent == MiniSweAgent.harness else None


@hookimpl
def bugbout_agents() -> Iterator[AgentPlugin]:
    yield AgentPlugin(
        name=MiniSweAgent.harness,
        factory=MiniSweAgent.from_options,
        options=MiniSweAgentOptions,
        description="mini-swe-agent (mini) on any LiteLLM model; `model` is required",
    )
