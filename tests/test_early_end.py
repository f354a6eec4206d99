"""A pytest that dies before its session begins (the package under test cannot be imported
where a plugin loads it) ran nothing, so nothing of it was faked: the run crashed, and
says why. Code that ends pytest silently, or takes bugbout's plugin out while the session
runs, is still caught. Real pytest runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.store.records import RunStatus, TestRun
from test_pytest_eras import HOST, environment, write

TESTS = "import pkg\n\n\ndef test_value():\n    assert pkg.VALUE == 1\n"
AS_PLUGIN = ProjectSettings(source="pkg", tests="tests", pytest_args=("-p", "pkg"))
"""A project that is a pytest plugin: pytest imports its package as it starts."""
UNPLUGGED = """
    def pytest_configure(config):
        plugin = config.pluginmanager.get_plugin("bugbout_outcomes")
        if plugin is not None:
            config.pluginmanager.unregister(plugin)
"""
SILENT = "import os\nos._exit(1)\n"


def _run(tmp_path: Path, package: str, conftest: str = "") -> TestRun:
    tree = write(
        tmp_path / "tree",
        {"pkg/__init__.py": package, "tests/test_value.py": TESTS, "tests/conftest.py": conftest},
    )
    return run_tests(
        environment(HOST, tree), tree, ["tests"], project=AS_PLUGIN, label="t", timeout=120
    )


def test_a_package_that_cannot_be_imported_as_pytest_starts_crashes_the_run(
    tmp_path: Path,
) -> None:
    run = _run(tmp_path, "VALUE = (\n")
    assert (run.status, run.tampering, run.outcomes) == (RunStatus.CRASHED, [], {})
    assert "SyntaxError" in run.detail


@pytest.mark.parametrize(
    ("conftest", "why"),
    [(UNPLUGGED, "without finishing its session"), (SILENT, "without finishing its session")],
)
def test_code_that_ends_or_unplugs_pytest_is_still_caught(
    conftest: str, why: str, tmp_path: Path
) -> None:
    run = _run(tmp_path, "VALUE = 1\n", conftest)
    assert run.status == RunStatus.TAMPERED
    assert any(why in reason for reason in run.tampering), run.tampering
