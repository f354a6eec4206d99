"""Helpers for testing bugbout and its plugins.

- :class:`RepositoryBuilder`: real git repositories with a chosen history (fix commits);
- :class:`ModelServer`, :class:`Script`, :class:`Shell`, :class:`Say`: the scripted model
  server that real agent CLIs talk to instead of a vendor's API;
- :mod:`bugbout.testing.fixtures`: pytest fixtures for plugin authors (a fresh plugin
  manager, inline plugins, repositories, the model server, a private ``BUGBOUT_HOME``);
  load them with ``pytest_plugins = ["bugbout.testing.fixtures"]`` in ``conftest.py``;
- :mod:`bugbout.testing.suites`: a conformance suite per plugin kind (``JudgeSuite``,
  ``AgentSuite``, ``SandboxSuite``, ...) that a plugin's tests subclass.

The suites and fixtures need pytest, which bugbout itself does not: they are imported
when first used (``from bugbout.testing import JudgeSuite`` works too).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from bugbout.testing.model_server import ModelServer, Say, Script, Shell
from bugbout.testing.repository import RepositoryBuilder

if TYPE_CHECKING:
    from bugbout.testing.fixtures import FixedBugRepository, build_fixed_bug_repository
    from bugbout.testing.suites import (
        AgentSuite,
        AssignmentSuite,
        AuditorSuite,
        EnvironmentSuite,
        IssueSourceSuite,
        JudgeSuite,
        MinerSuite,
        PluginSuite,
        ReporterSuite,
        SandboxSuite,
        TestRunnerSuite,
    )

_LAZY = {
    "FixedBugRepository": "bugbout.testing.fixtures",
    "build_fixed_bug_repository": "bugbout.testing.fixtures",
    "AgentSuite": "bugbout.testing.suites",
    "AssignmentSuite": "bugbout.testing.suites",
    "AuditorSuite": "bugbout.testing.suites",
    "EnvironmentSuite": "bugbout.testing.suites",
    "ExaminerSuite": "bugbout.testing.suites",  # AssignmentSuite's old name: it warns
    "IssueSourceSuite": "bugbout.testing.suites",
    "JudgeSuite": "bugbout.testing.suites",
    "MinerSuite": "bugbout.testing.suites",
    "PluginSuite": "bugbout.testing.suites",
    "ReporterSuite": "bugbout.testing.suites",
    "SandboxSuite": "bugbout.testing.suites",
    "TestRunnerSuite": "bugbout.testing.suites",
}
"""Names imported on first use: their modules import pytest."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "AgentSuite",
    "AssignmentSuite",
    "AuditorSuite",
    "EnvironmentSuite",
    "FixedBugRepository",
    "IssueSourceSuite",
    "JudgeSuite",
    "MinerSuite",
    "ModelServer",
    "PluginSuite",
    "ReporterSuite",
    "RepositoryBuilder",
    "SandboxSuite",
    "Say",
    "Script",
    "Shell",
    "TestRunnerSuite",
    "build_fixed_bug_repository",
]
