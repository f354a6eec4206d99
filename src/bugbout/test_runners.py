"""The stable API for test-runner plugins: their record, ``hookimpl``, ``Options``, the
runners' contract (:class:`TestRunner`, :class:`TestRunRequest`, :class:`TestStyle`),
the run records they return, and the helpers the built-in ``pytest`` runner is made of
(its runs, with their canaries and tally checks, the tests a module defines, where a
suite is, the pytest of an environment's era, which functions a change lies in), and
``watch``, which hands a process group a run starts to the bout's stop, and
``scratch_folder``, a folder a run writes in that the next bugbout removes when this one
is killed.

A test-runner plugin imports these names from here; ``bugbout.core`` is private and may
change in any release. Each name is imported the first time it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bugbout.core.contract.exports import lazy_exports

__all__ = [
    "SEPARATOR",
    "Confine",
    "Environment",
    "EnvironmentFailure",
    "FileChange",
    "NoOptions",
    "Options",
    "Outcome",
    "ProjectSettings",
    "RunStatus",
    "TestRun",
    "TestRunNotStarted",
    "TestRunRequest",
    "TestRunner",
    "TestRunnerPlugin",
    "TestStyle",
    "changed_functions",
    "create_plugin",
    "defined_tests",
    "file_of",
    "hookimpl",
    "inspect_patch",
    "is_test_module",
    "pytest_era",
    "run_pytest",
    "scratch_folder",
    "suite_paths",
    "watch",
    "writing_folder",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "SEPARATOR": "bugbout.core.plumbing.testruns.test_runner",
        "Confine": "bugbout.core.plumbing.confinement.confine",
        "Environment": "bugbout.core.plumbing.environments.environment",
        "FileChange": "bugbout.core.store.race_records",
        "EnvironmentFailure": "bugbout.core.contract.errors",
        "NoOptions": "bugbout.core.contract.types",
        "Options": "bugbout.core.contract.types",
        "Outcome": "bugbout.core.store.records",
        "ProjectSettings": "bugbout.core.contract.settings",
        "RunStatus": "bugbout.core.store.records",
        "TestRun": "bugbout.core.store.records",
        "TestRunNotStarted": "bugbout.core.plumbing.testruns.unstarted",
        "TestRunRequest": "bugbout.core.plumbing.testruns.test_runner",
        "TestRunner": "bugbout.core.plumbing.testruns.test_runner",
        "TestRunnerPlugin": "bugbout.core.contract.types",
        "TestStyle": "bugbout.core.plumbing.testruns.test_runner",
        "changed_functions": "bugbout.core.crossexam.function_spans",
        "create_plugin": "bugbout.core.contract.manager",
        "defined_tests": "bugbout.core.plumbing.project.testmodules",
        "file_of": "bugbout.core.plumbing.testruns.test_runner",
        "hookimpl": "bugbout.core.contract.hookspecs",
        "inspect_patch": "bugbout.core.plumbing.tampering.tamper",
        "is_test_module": "bugbout.core.plumbing.project.testmodules",
        "pytest_era": "bugbout.core.plumbing.environments.pytest_era",
        "run_pytest": "bugbout.core.plumbing.testruns.testrun:run_tests",
        "scratch_folder": "bugbout.core.plumbing.confinement.scratch",
        "suite_paths": "bugbout.core.plumbing.testruns.suite",
        "watch": "bugbout.core.plumbing.runtime.stopping",
        "writing_folder": "bugbout.core.plumbing.testruns.suite",
    },
)

if TYPE_CHECKING:
    from bugbout.core.contract.errors import EnvironmentFailure
    from bugbout.core.contract.hookspecs import hookimpl
    from bugbout.core.contract.manager import create_plugin
    from bugbout.core.contract.settings import ProjectSettings
    from bugbout.core.contract.types import NoOptions, Options, TestRunnerPlugin
    from bugbout.core.crossexam.function_spans import changed_functions
    from bugbout.core.plumbing.confinement.confine import Confine
    from bugbout.core.plumbing.confinement.scratch import scratch_folder
    from bugbout.core.plumbing.environments.environment import Environment
    from bugbout.core.plumbing.environments.pytest_era import pytest_era
    from bugbout.core.plumbing.project.testmodules import defined_tests, is_test_module
    from bugbout.core.plumbing.runtime.stopping import watch
    from bugbout.core.plumbing.tampering.tamper import inspect_patch
    from bugbout.core.plumbing.testruns.suite import suite_paths, writing_folder
    from bugbout.core.plumbing.testruns.test_runner import (
        SEPARATOR,
        TestRunner,
        TestRunRequest,
        TestStyle,
        file_of,
    )
    from bugbout.core.plumbing.testruns.testrun import run_tests as run_pytest
    from bugbout.core.plumbing.testruns.unstarted import TestRunNotStarted
    from bugbout.core.store.race_records import FileChange
    from bugbout.core.store.records import Outcome, RunStatus, TestRun
