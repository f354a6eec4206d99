"""Conformance suites: the contract of each plugin kind, as tests a plugin's own test
suite subclasses (in the manner of Hydra's ``LauncherTestSuite``).

::

    from bugbout.testing.suites import JudgeSuite

    class TestCautious(JudgeSuite):
        plugin = "cautious"          # the name it is registered under
        options = {"threshold": 0.9}  # its options, as in bugbout.yaml

The plugin is looked up by name, with its options, in ``make_plugins()`` (the built-ins
and every installed ``bugbout`` entry-point plugin); a suite's ``plugins`` fixture can be
overridden to supply another plugin manager. The suites need no fixture plugin; the
fixtures of :mod:`bugbout.testing.fixtures` are for a plugin's other tests.

==========================  ============  ==============================================
suite                       kind          class attributes besides ``plugin``, ``options``
==========================  ============  ==============================================
:class:`MinerSuite`         miner         ``finds_fix``
:class:`IssueSourceSuite`   issue-source  ``known_issue``
:class:`EnvironmentSuite`   environment   ``date``
:class:`TestRunnerSuite`    test-runner   ``files``, ``passing``, ``failing``...
:class:`AgentSuite`         agent         ``credentials``
:class:`SandboxSuite`       sandbox       ``confines``
:class:`ExecutorSuite`      executor
:class:`AssignmentSuite`    assignment
:class:`JudgeSuite`         judge
:class:`AuditorSuite`       auditor
:class:`ReporterSuite`      reporter
==========================  ============  ==============================================

Loading :mod:`bugbout.testing.fixtures` from ``conftest.py`` (``pytest_plugins =
["bugbout.testing.fixtures"]``) also has pytest rewrite the suites' asserts, so that a
failing contract test shows the values it compared.
"""

from typing import Any

from bugbout.testing.suites.agents import AgentSuite
from bugbout.testing.suites.assignments import AssignmentSuite
from bugbout.testing.suites.auditors import AuditorSuite
from bugbout.testing.suites.base import PluginSuite
from bugbout.testing.suites.environments import EnvironmentSuite
from bugbout.testing.suites.executors import ExecutorSuite
from bugbout.testing.suites.issue_sources import IssueSourceSuite
from bugbout.testing.suites.judges import JudgeSuite
from bugbout.testing.suites.miners import MinerSuite
from bugbout.testing.suites.reporters import ReporterSuite
from bugbout.testing.suites.sandboxes import SandboxSuite
from bugbout.testing.suites.test_runners import TestRunnerSuite

SUITES: dict[str, type[PluginSuite]] = {
    suite.kind: suite
    for suite in (
        MinerSuite,
        IssueSourceSuite,
        EnvironmentSuite,
        TestRunnerSuite,
        AgentSuite,
        SandboxSuite,
        ExecutorSuite,
        AssignmentSuite,
        JudgeSuite,
        AuditorSuite,
        ReporterSuite,
    )
}
"""The suite of each plugin kind, by kind name (as in :data:`bugbout.core.contract.types.KINDS`)."""

__all__ = [
    "SUITES",
    "AgentSuite",
    "AssignmentSuite",
    "AuditorSuite",
    "EnvironmentSuite",
    "ExecutorSuite",
    "IssueSourceSuite",
    "JudgeSuite",
    "MinerSuite",
    "PluginSuite",
    "ReporterSuite",
    "SandboxSuite",
    "TestRunnerSuite",
]


def __getattr__(name: str) -> Any:
    """``ExaminerSuite``, the old name of :class:`AssignmentSuite`, with a warning."""
    if name != "ExaminerSuite":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import warnings

    warnings.warn(
        "ExaminerSuite is now AssignmentSuite; import that", DeprecationWarning, stacklevel=2
    )
    return AssignmentSuite
