"""Coding agents: how an adapter says to start its CLI; bugbout does everything else.

An adapter subclasses :class:`CodingAgent`, names its ``harness`` and ``executable``,
and implements :meth:`CodingAgent.invocation` (and optionally :meth:`CodingAgent.parse`).
Checkouts, the sandbox, timeouts, logs, the patch and scoring are bugbout's.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Self
from urllib.parse import urlsplit

from pydantic import Field

from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.types import Options
from bugbout.core.plumbing.confinement.untrusted import read_untrusted
from bugbout.core.race.instructions import KEEP, arm_key
from bugbout.sandbox.confinement import Confinement, Sandbox

if TYPE_CHECKING:
    from bugbout.core.race.native import NativeSetup

LOCALE_VARIABLES = ("LANG", "LC_ALL", "LC_CTYPE", "TZ")
VENDOR_KEYS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "google": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
}
"""Each vendor's credential variables: an agent receives its own vendor's only."""
SUMMARY_BYTES = 8_000
"""How much of the end of ``stdout.log`` the default summary reads."""
SEARCHED_BYTES = 80_000
"""How much of the end of each log the default usage-limit check reads."""

_VENDOR_PATTERNS = (
    (re.compile(r"claude|sonnet|opus|haiku", re.I), "anthropic"),
    (re.compile(r"\bgpt|codex|\bo[134](?:-|$)|openai", re.I), "openai"),
    (re.compile(r"gemini|gemma|google", re.I), "google"),
    (re.compile(r"qwen", re.I), "alibaba"),
    (re.compile(r"llama", re.I), "meta"),
    (re.compile(r"mistral|codestral|devstral", re.I), "mistral"),
    (re.compile(r"deepseek", re.I), "deepseek"),
)


def guess_vendor(model: str | None) -> str | None:
    """Who made ``model``, from its name: ``claude-sonnet-4-5`` → ``anthropic``."""
    if not model:
        return None
    for pattern, vendor in _VENDOR_PATTERNS:
        if pattern.search(model):
            return vendor
    return None


class AgentOptions(Options):
    """Options every agent takes; adapters subclass this to add their own."""

    model: str | None = None
    name: str | None = None
    """How the agent appears in reports; ``agent/model`` or ``agent`` by default."""
    vendor: str | None = None
    """Who made the model; guessed from the model name when unset."""
    quota: str | None = None
    """The rate limit it shares with other agents; the agent type by default."""
    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment variables for the agent."""
    state_dirs: tuple[str, ...] = ()
    """Directories outside the checkout the agent must write to (``~`` is the user's HOME)."""
    instructions: str = KEEP
    """The checkout's own instruction files (``AGENTS.md``, ``CLAUDE.md``...): ``keep``
    them, ``remove`` them, or the path of a file that replaces them."""


class NativeAgentOptions(AgentOptions):
    """The options of an agent that can run with the team's own setup."""

    native: str | None = None
    """The team's setup for the CLI (a folder, or its instruction file), copied into the
    agent's private HOME where the CLI reads its user configuration."""


@dataclass(frozen=True)
class Invocation:
    """How to start the agent for one session."""

    argv: list[str]
    stdin: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables on top of bugbout's allow-listed environment."""
    confined: bool = True
    """Run the whole process under bugbout's sandbox (``False`` for agents that sandbox
    their own shell commands)."""
    endpoints: tuple[str, ...] = ()
    """The model endpoints the agent process must reach (``https://api.anthropic.com``,
    ``http://127.0.0.1:8080``). Inside the sandbox there is no network: only these are
    reachable, through bugbout's egress proxy (plain ``http://`` endpoints at the same
    address, ``https://`` ones through ``HTTPS_PROXY``)."""


@dataclass(frozen=True)
class Session:
    """One attempt as the adapter sees it."""

    prompt: str
    workdir: Path
    logdir: Path
    home: Path
    """A private, empty HOME for the agent."""
    sandbox: Sandbox
    confinement: Confinement
    """The limits bugbout applies to the agent's process and shell commands."""
    prompt_file: Path
    test_command: str
    """The command that runs the project's tests in the same environment as the oracle."""
    task_id: str = ""
    """The task the attempt is on (an agent replaying stored patches looks its own up)."""


class CodingAgent:
    """Base class of agent adapters.

    Example::

        class MyAgent(CodingAgent):
            harness = "my-agent"
            executable = "my-agent"

            def invocation(self, session):
                return Invocation([self.command(), "--model", self.model, "--yes"],
                                  stdin=session.prompt)
    """

    harness: ClassVar[str] = "agent"
    """The agent type: the default name prefix and quota."""
    Options: ClassVar[type[AgentOptions]] = AgentOptions
    """The adapter's options model; an adapter also narrows ``options`` to it."""
    default_vendor: ClassVar[str | None] = None
    instruction_file: ClassVar[str] = "AGENTS.md"
    """The instruction file the CLI reads: a replacement arm is written under this name."""
    options: AgentOptions

    def __init__(self, model: str | None = None, **options: Any) -> None:
        if model is not None:
            options["model"] = model
        self.options = self.Options.model_validate(options)

    @classmethod
    def from_options(cls, options: AgentOptions) -> Self:
        """The plugin factory: an adapter built from validated options, through the one
        constructor (the options it was given, under their Python names)."""
        return cls(**options.model_dump(exclude_unset=True))

    @property
    def executable(self) -> str:
        """The program ``bugbout doctor`` looks for (a class attribute, or a property
        reading the options)."""
        return ""

    @property
    def model(self) -> str | None:
        return self.options.model

    @property
    def vendor(self) -> str | None:
        return self.options.vendor or guess_vendor(self.model) or self.default_vendor

    @property
    def name(self) -> str:
        if self.options.name:
            return self.options.name
        return f"{self.harness}/{self.model}" if self.model else self.harness

    @property
    def quota(self) -> str:
        return self.options.quota or self.harness

    def command(self) -> str:
        """The full path of the agent's executable; a clear error when it is missing."""
        found = shutil.which(self.executable)
        if found is None:
            raise ConfigError(
                f"agent {self.name!r} needs {self.executable!r}, which is not on PATH; "
                "install it (see `bugbout doctor`)"
            )
        return found

    def invocation(self, session: Session) -> Invocation:
        """How to start the agent on ``session``."""
        raise NotImplementedError

    def parse(self, logdir: Path) -> tuple[str, dict[str, int]]:
        """The agent's closing summary and token usage, from its logs."""
        text = read_untrusted(logdir / "stdout.log", limit=SUMMARY_BYTES, tail=True) or ""
        return text[-2000:].strip(), {}

    def hit_usage_limit(self, logdir: Path, exit_code: int | None) -> bool:
        """Whether the agent stopped on a usage limit (the attempt is then ``quota``)."""
        text = "".join(
            (read_untrusted(logdir / name, limit=SEARCHED_BYTES, tail=True) or "")[-20000:]
            for name in ("stdout.log", "stderr.log")
        )
        return bool(
            exit_code
            and re.search(r"usage limit|rate limit|quota exceeded|429 too many", text, re.I)
        )

    def environment(self, session: Session) -> dict[str, str]:
        """The allow-listed environment: PATH, locale, a private HOME, this vendor's key,
        and the declared variables; nothing else of the user's environment."""
        env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(session.home)}
        env.update({k: os.environ[k] for k in LOCALE_VARIABLES if k in os.environ})
        env.setdefault("LANG", "C.UTF-8")
        env["TERM"] = "dumb"
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        for variable in VENDOR_KEYS.get(self.vendor or "", ()):
            if variable in os.environ:
                env[variable] = os.environ[variable]
        env.update(self.options.env)
        return env

    def settings_key(self) -> dict[str, Any]:
        """What determines this agent's attempts (with the task and prompt version): its
        options, the files of a native setup and of an instruction arm by content. The
        options added with those are in it only when set: older keys stay the same."""
        options = self.options.model_dump(mode="json", by_alias=True)
        if options.pop("instructions", KEEP) != KEEP:
            options["instructions"] = arm_key(self.options.instructions)
        native = self.native()
        options.pop("native", None)
        if native is not None:
            options["native"] = native.digests()
        return {"harness": self.harness, **options}

    def native(self) -> NativeSetup | None:
        """The team's setup this agent runs with (its ``native`` option), if any: bugbout
        copies it into the agent's HOME, shows its MCP servers' programs read-only in the
        sandbox, and opens the endpoints they reach."""
        given = getattr(self.options, "native", None)
        if given is None:
            return None
        read = self.__dict__.get("_native")  # read once: a bout asks for it at every step
        if read is None or read[0] != given:
            read = self.__dict__["_native"] = (given, self.native_setup())
        setup: NativeSetup = read[1]
        return setup

    def native_setup(self) -> NativeSetup:
        """The setup the ``native`` option names; adapters of CLIs that read one override
        this."""
        raise ConfigError(f"agent {self.name!r} cannot run a native setup; remove `native`")


# -- helpers for adapters -----------------------------------------------------------------


def usage_tokens(
    *, fresh: int = 0, output: int = 0, cache_read: int = 0, cache_write: int = 0
) -> dict[str, int]:
    """Token usage as every adapter reports it, in disjoint parts whose sum is the total:
    input neither read from nor written to a prompt cache, output (reasoning included),
    input read from the cache, input written to it."""
    return {
        "input_tokens": fresh,
        "output_tokens": output,
        "cache_read_tokens": cache_read,
        "cache_write_tokens": cache_write,
    }


def add_usage(left: dict[str, int], right: dict[str, int]) -> dict[str, int]:
    """Two usages added up, key by key."""
    return {key: left.get(key, 0) + right.get(key, 0) for key in {**left, **right}}


def as_int(value: Any) -> int:
    """A token count from a log: an int, or 0 for anything else."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def check_url(url: str | None) -> str | None:
    """An http(s) URL without its trailing slash; anything else is an error."""
    if url is None:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not an http:// or https:// URL")
    return url.rstrip("/")


def origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url``: what the sandbox lets the agent reach."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"


def json_events(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSON-lines log (``--json``, ``stream-json``), skipping any
    other line; at most its last :data:`~bugbout.core.plumbing.confinement.untrusted.READ_LIMIT`
    bytes."""
    text = read_untrusted(path, tail=True) or ""
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        event = json_value(line)
        if isinstance(event, dict):
            yield event


def json_value(text: str) -> Any:
    """``text`` parsed as JSON, or ``None`` when it is not JSON (or nested too deep to
    parse: an agent wrote it)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None
