"""The stable API for agent plugins: their record, ``hookimpl``, ``Options``, and a coding
agent's command line, its session's cost and usage, and its transcript.

An agent plugin imports these names from here; ``bugbout.core`` is private and may change
in any release. Each name is imported the first time it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bugbout.core.contract.exports import lazy_exports

__all__ = [
    "AgentOptions",
    "AgentPlugin",
    "CodingAgent",
    "ConfigError",
    "Invocation",
    "NativeAgentOptions",
    "NativeSetup",
    "NoOptions",
    "Options",
    "PatchError",
    "Session",
    "Step",
    "add_usage",
    "apply_patch",
    "as_dict",
    "as_int",
    "as_list",
    "check_url",
    "create_plugin",
    "guess_vendor",
    "hookimpl",
    "json_events",
    "json_value",
    "origin",
    "read_untrusted",
    "tool_step",
    "usage_tokens",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "AgentOptions": "bugbout.core.race.agents",
        "AgentPlugin": "bugbout.core.contract.types",
        "CodingAgent": "bugbout.core.race.agents",
        "ConfigError": "bugbout.core.contract.errors",
        "Invocation": "bugbout.core.race.agents",
        "NativeAgentOptions": "bugbout.core.race.agents",
        "NativeSetup": "bugbout.core.race.native",
        "NoOptions": "bugbout.core.contract.types",
        "Options": "bugbout.core.contract.types",
        "PatchError": "bugbout.core.plumbing.trees.patch",
        "Session": "bugbout.core.race.agents",
        "Step": "bugbout.core.contract.transcript",
        "add_usage": "bugbout.core.race.agents",
        "apply_patch": "bugbout.core.plumbing.trees.patch",
        "as_dict": "bugbout.core.contract.transcript",
        "as_int": "bugbout.core.race.agents",
        "as_list": "bugbout.core.contract.transcript",
        "check_url": "bugbout.core.race.agents",
        "create_plugin": "bugbout.core.contract.manager",
        "guess_vendor": "bugbout.core.race.agents",
        "hookimpl": "bugbout.core.contract.hookspecs",
        "json_events": "bugbout.core.race.agents",
        "json_value": "bugbout.core.race.agents",
        "origin": "bugbout.core.race.agents",
        "read_untrusted": "bugbout.core.plumbing.confinement.untrusted",
        "tool_step": "bugbout.core.contract.transcript",
        "usage_tokens": "bugbout.core.race.agents",
    },
)

if TYPE_CHECKING:
    from bugbout.core.contract.errors import ConfigError
    from bugbout.core.contract.hookspecs import hookimpl
    from bugbout.core.contract.manager import create_plugin
    from bugbout.core.contract.transcript import Step, as_dict, as_list, tool_step
    from bugbout.core.contract.types import AgentPlugin, NoOptions, Options
    from bugbout.core.plumbing.confinement.untrusted import read_untrusted
    from bugbout.core.plumbing.trees.patch import PatchError, apply_patch
    from bugbout.core.race.agents import (
        AgentOptions,
        CodingAgent,
        Invocation,
        NativeAgentOptions,
        Session,
        add_usage,
        as_int,
        check_url,
        guess_vendor,
        json_events,
        json_value,
        origin,
        usage_tokens,
    )
    from bugbout.core.race.native import NativeSetup
