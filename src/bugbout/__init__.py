"""bugbout: which coding agent really fixes bugs in your codebase?

The public API is re-exported lazily: ``import bugbout`` (or any plugin module) loads
nothing of the pipeline until one of these names is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0.dev0"

_EXPORTS: dict[str, str] = {
    "Bout": "bugbout.bout",
    "BoutResult": "bugbout.bout",
    "Project": "bugbout.bout",
    "render_markdown": "bugbout.bout",
    "AgentOptions": "bugbout.core.agents",
    "CodingAgent": "bugbout.core.agents",
    "Invocation": "bugbout.core.agents",
    "Session": "bugbout.core.agents",
    "Command": "bugbout.core.environment",
    "Environment": "bugbout.core.environment",
    "EnvironmentRequest": "bugbout.core.environment",
    "BugboutError": "bugbout.core.errors",
    "ConfigError": "bugbout.core.errors",
    "EnvironmentFailure": "bugbout.core.errors",
    "hookimpl": "bugbout.core.hookspecs",
    "IssueRequest": "bugbout.core.issues",
    "IssueSourceUnavailable": "bugbout.core.issues",
    "MiningRequest": "bugbout.core.mining",
    "Attempt": "bugbout.core.records",
    "Issue": "bugbout.core.records",
    "Oracle": "bugbout.core.records",
    "Task": "bugbout.core.records",
    "TaskSet": "bugbout.core.records",
    "AgentPlugin": "bugbout.core.types",
    "AuditorPlugin": "bugbout.core.types",
    "EnvironmentPlugin": "bugbout.core.types",
    "ExaminerPlugin": "bugbout.core.types",
    "ExecutorPlugin": "bugbout.core.types",
    "IssueSourcePlugin": "bugbout.core.types",
    "JudgePlugin": "bugbout.core.types",
    "MinerPlugin": "bugbout.core.types",
    "Options": "bugbout.core.types",
    "ReporterPlugin": "bugbout.core.types",
    "SandboxPlugin": "bugbout.core.types",
}
"""Each public name and the module that defines it."""

__all__ = [
    "AgentOptions",
    "AgentPlugin",
    "Attempt",
    "AuditorPlugin",
    "Bout",
    "BoutResult",
    "BugboutError",
    "CodingAgent",
    "Command",
    "ConfigError",
    "Environment",
    "EnvironmentFailure",
    "EnvironmentPlugin",
    "EnvironmentRequest",
    "ExaminerPlugin",
    "ExecutorPlugin",
    "Invocation",
    "Issue",
    "IssueRequest",
    "IssueSourcePlugin",
    "IssueSourceUnavailable",
    "JudgePlugin",
    "MinerPlugin",
    "MiningRequest",
    "Options",
    "Oracle",
    "Project",
    "ReporterPlugin",
    "SandboxPlugin",
    "Session",
    "Task",
    "TaskSet",
    "__version__",
    "hookimpl",
    "render_markdown",
]


def __getattr__(name: str) -> Any:
    """Import a public name's module the first time the name is used."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'bugbout' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from bugbout.bout import Bout, BoutResult, Project, render_markdown
    from bugbout.core.agents import AgentOptions, CodingAgent, Invocation, Session
    from bugbout.core.environment import Command, Environment, EnvironmentRequest
    from bugbout.core.errors import BugboutError, ConfigError, EnvironmentFailure
    from bugbout.core.hookspecs import hookimpl
    from bugbout.core.issues import IssueRequest, IssueSourceUnavailable
    from bugbout.core.mining import MiningRequest
    from bugbout.core.records import Attempt, Issue, Oracle, Task, TaskSet
    from bugbout.core.types import (
        AgentPlugin,
        AuditorPlugin,
        EnvironmentPlugin,
        ExaminerPlugin,
        ExecutorPlugin,
        IssueSourcePlugin,
        JudgePlugin,
        MinerPlugin,
        Options,
        ReporterPlugin,
        SandboxPlugin,
    )
