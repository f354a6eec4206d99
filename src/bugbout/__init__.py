"""bugbout: which coding agent really fixes bugs in your codebase?

The public API is re-exported lazily: ``import bugbout`` (or any plugin module) loads
nothing of the pipeline until one of these names is used. A plugin imports the public
module of its kind (``bugbout.judges``, ``bugbout.sandboxes``, ...); ``bugbout.core`` is
private.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from bugbout.core.contract.exports import lazy_exports

__version__ = "0.2.0.dev0"

# A library's logger prints nothing until its application configures logging.
logging.getLogger(__name__).addHandler(logging.NullHandler())

_EXPORTS: dict[str, str] = {
    "Bout": "bugbout.bout",
    "BoutResult": "bugbout.bout",
    "Project": "bugbout.bout",
    "render_markdown": "bugbout.bout",
    "render_report": "bugbout.bout",
    "read_report": "bugbout.bout",
    "pool_reports": "bugbout.bout",
    "schema": "bugbout.core.schemas:shipped_schema",
    "ProgressEvent": "bugbout.core.plumbing.runtime.progress",
    "AgentOptions": "bugbout.core.race.agents",
    "CodingAgent": "bugbout.core.race.agents",
    "Invocation": "bugbout.core.race.agents",
    "Session": "bugbout.core.race.agents",
    "Command": "bugbout.core.plumbing.environments.environment",
    "Environment": "bugbout.core.plumbing.environments.environment",
    "EnvironmentRequest": "bugbout.core.plumbing.environments.environment",
    "BugboutError": "bugbout.core.contract.errors",
    "ConfigError": "bugbout.core.contract.errors",
    "EnvironmentFailure": "bugbout.core.contract.errors",
    "hookimpl": "bugbout.core.contract.hookspecs",
    "IssueRequest": "bugbout.core.mine.issues",
    "IssueSourceUnavailable": "bugbout.core.mine.issues",
    "MiningRequest": "bugbout.core.mine.mining",
    "Attempt": "bugbout.core.store.race_records",
    "Issue": "bugbout.core.store.records",
    "Oracle": "bugbout.core.store.records",
    "Task": "bugbout.core.store.records",
    "TaskSet": "bugbout.core.store.records",
    "AgentPlugin": "bugbout.core.contract.types",
    "AssignmentPlugin": "bugbout.core.contract.types",
    "AuditorPlugin": "bugbout.core.contract.types",
    "EnvironmentPlugin": "bugbout.core.contract.types",
    "ExecutorPlugin": "bugbout.core.contract.types",
    "IssueSourcePlugin": "bugbout.core.contract.types",
    "JudgePlugin": "bugbout.core.contract.types",
    "MinerPlugin": "bugbout.core.contract.types",
    "Options": "bugbout.core.contract.types",
    "ReporterPlugin": "bugbout.core.contract.types",
    "SandboxPlugin": "bugbout.core.contract.types",
    "TestRunnerPlugin": "bugbout.core.contract.types",
}
"""Each public name and the module that defines it."""
_RENAMED = {"ExaminerPlugin": "AssignmentPlugin"}
"""Old public names, still importable with a ``DeprecationWarning``: old → new."""

__all__ = [
    "AgentOptions",
    "AgentPlugin",
    "AssignmentPlugin",
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
    "ProgressEvent",
    "Project",
    "ReporterPlugin",
    "SandboxPlugin",
    "Session",
    "Task",
    "TaskSet",
    "TestRunnerPlugin",
    "__version__",
    "hookimpl",
    "pool_reports",
    "read_report",
    "render_markdown",
    "render_report",
    "schema",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _RENAMED)

if TYPE_CHECKING:
    from bugbout.bout import (
        Bout,
        BoutResult,
        Project,
        pool_reports,
        read_report,
        render_markdown,
        render_report,
    )
    from bugbout.core.contract.errors import BugboutError, ConfigError, EnvironmentFailure
    from bugbout.core.contract.hookspecs import hookimpl
    from bugbout.core.contract.types import (
        AgentPlugin,
        AssignmentPlugin,
        AuditorPlugin,
        EnvironmentPlugin,
        ExecutorPlugin,
        IssueSourcePlugin,
        JudgePlugin,
        MinerPlugin,
        Options,
        ReporterPlugin,
        SandboxPlugin,
        TestRunnerPlugin,
    )
    from bugbout.core.mine.issues import IssueRequest, IssueSourceUnavailable
    from bugbout.core.mine.mining import MiningRequest
    from bugbout.core.plumbing.environments.environment import (
        Command,
        Environment,
        EnvironmentRequest,
    )
    from bugbout.core.plumbing.runtime.progress import ProgressEvent
    from bugbout.core.race.agents import AgentOptions, CodingAgent, Invocation, Session
    from bugbout.core.schemas import shipped_schema as schema
    from bugbout.core.store.race_records import Attempt
    from bugbout.core.store.records import Issue, Oracle, Task, TaskSet
