"""bugbout: which coding agent really fixes bugs in your codebase?"""

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
    ReporterPlugin,
    SandboxPlugin,
)

__version__ = "0.2.0.dev0"

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
