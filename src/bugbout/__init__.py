"""bugbout: which coding agent really fixes bugs in your codebase?"""

from bugbout.core.hookspecs import hookimpl
from bugbout.core.types import (
    AgentPlugin,
    AuditorPlugin,
    EnvironmentPlugin,
    ExaminerPlugin,
    IssueSourcePlugin,
    JudgePlugin,
    MinerPlugin,
    ReporterPlugin,
    SandboxPlugin,
)

__version__ = "0.2.0.dev0"

__all__ = [
    "AgentPlugin",
    "AuditorPlugin",
    "EnvironmentPlugin",
    "ExaminerPlugin",
    "IssueSourcePlugin",
    "JudgePlugin",
    "MinerPlugin",
    "ReporterPlugin",
    "SandboxPlugin",
    "__version__",
    "hookimpl",
]
