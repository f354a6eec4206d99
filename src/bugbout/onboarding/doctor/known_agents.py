"""What bugbout knows of the packaged agents (how to install them, which model name and API
base a dry run gives them), and a contestant's settings pointed at the scripted server."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

DUMMY_KEY = "bugbout-doctor-dummy-key"
"""The credential every agent gets in a dry run: the scripted server accepts anything."""
SECRET_VARIABLE = re.compile(r"API_KEY$|_TOKEN$|SECRET|PASSWORD|CREDENTIALS", re.I)
"""Variables kept away from every CLI doctor starts: the user's keys never leave."""


@dataclass(frozen=True)
class KnownAgent:
    """What bugbout knows of a packaged agent's CLI."""

    install: str
    """How to install the CLI."""
    upgrade: str
    """How to update it, when it no longer accepts a flag its adapter passes."""
    model: str
    """A model name the CLI accepts, for the dry run (the scripted server answers any)."""
    url_suffix: str = ""
    """Appended to the scripted server's URL to make the adapter's ``base-url``."""
    keys: tuple[str, ...] = ()
    """Credential variables the CLI wants, set to :data:`DUMMY_KEY` in a dry run."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """More options for the dry run."""
    distribution: str | None = None
    """For a CLI written in Python without ``--version``: the distribution whose version
    its interpreter (from the ``#!`` line) reports."""


KNOWN_AGENTS: dict[str, KnownAgent] = {
    "claude-code": KnownAgent(
        install="npm install -g @anthropic-ai/claude-code",
        upgrade="npm install -g @anthropic-ai/claude-code@latest",
        model="claude-sonnet-4-5",
        keys=("ANTHROPIC_API_KEY",),
    ),
    "codex": KnownAgent(
        install="npm install -g @openai/codex",
        upgrade="npm install -g @openai/codex@latest",
        model="gpt-5.5",
        url_suffix="/v1",
        keys=("OPENAI_API_KEY",),
    ),
    "gemini-cli": KnownAgent(
        install="npm install -g @google/gemini-cli",
        upgrade="npm install -g @google/gemini-cli@latest",
        model="gemini-2.5-flash",
        keys=("GEMINI_API_KEY",),
    ),
    "mini-swe-agent": KnownAgent(
        install="pip install mini-swe-agent, or set the contestant's `executable` to its `mini`",
        upgrade="pip install --upgrade mini-swe-agent",
        model="openai/scripted",
        url_suffix="/v1",
        keys=("OPENAI_API_KEY",),
        options={"step-limit": 10},
        distribution="mini-swe-agent",
    ),
}
"""The packaged agents, by harness."""


def dry_entry(entry: Mapping[str, Any], url: str) -> dict[str, Any]:
    """A contestant's settings pointed at the scripted server at ``url``."""
    known = KNOWN_AGENTS.get(str(entry.get("agent")))
    if known is None:
        return dict(entry)
    own = {k: v for k, v in dict(entry.get("env") or {}).items() if not SECRET_VARIABLE.search(k)}
    env = {**own, **dict.fromkeys(known.keys, DUMMY_KEY)}
    return {
        **entry,
        **known.options,
        "model": known.model,
        "base-url": url + known.url_suffix,
        "env": env,
    }
