"""The test runner the tests' benches and ground truth use: the built-in ``pytest``,
found through the registry as a bout finds it."""

from __future__ import annotations

import functools

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.types import TestRunnerPlugin
from bugbout.core.plumbing.testruns.test_runner import TestRunner


@functools.cache
def pytest_runner() -> TestRunner:
    """The ``pytest`` test runner, with its default options."""
    return make_plugins(kinds=[TestRunnerPlugin], entry_points=False).create(
        TestRunnerPlugin, "pytest"
    )
