"""What a test run costs inside pytest, with every check kept: the module pytest loads
with ``-p`` (whose source it parses and rewrites in every run) holds no code, the hooks
are imported as plain modules, and the impostor probe is imported only by a run that
probes."""

from __future__ import annotations

from pathlib import Path

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import Environment, EnvironmentRequest
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.store.records import Outcome, RunStatus

PROJECT = ProjectSettings(source="pkg", tests="tests")
LOADED = """\
import sys


def test_the_probe_is_not_imported():
    assert "bugbout_impostors" not in sys.modules


def test_the_hooks_are_not_rewritten():
    loader = type(sys.modules["bugbout_hooks"].__loader__).__name__
    assert loader != "AssertionRewritingHook", loader


def test_the_loaded_plugin_holds_no_code():
    import bugbout_outcomes

    assert bugbout_outcomes.pytest_runtest_logreport.__module__ == "bugbout_hooks"
"""


def _environment(tree: Path, home: Path) -> Environment:
    return (
        make_plugins(entry_points=False)
        .create("environment", "interpreter")
        .build(EnvironmentRequest(project=PROJECT, tree=tree, home=home))
    )


def test_a_run_imports_what_it_uses_and_pytest_rewrites_no_plugin_code(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "tests").mkdir()
    (tree / "tests" / "test_loaded.py").write_text(LOADED)
    environment = _environment(tree, tmp_path / "home")

    run = run_tests(environment, tree, ["tests"], project=PROJECT, label="r", timeout=120)

    assert run.status == RunStatus.OK, run.tampering or run.detail
    assert run.outcomes == {
        "tests/test_loaded.py::test_the_probe_is_not_imported": Outcome.PASSED,
        "tests/test_loaded.py::test_the_hooks_are_not_rewritten": Outcome.PASSED,
        "tests/test_loaded.py::test_the_loaded_plugin_holds_no_code": Outcome.PASSED,
    }, run.failures
