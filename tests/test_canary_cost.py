"""What a failure costs a run: pytest shows a failure's source, asking ``inspect`` which
module the test's file is; the outcome plugin has told it for every test module it
keeps, so no failure in a test module (the canary that must fail, in a run where
nothing else fails) makes ``inspect`` look at every loaded module (``bugbout_hooks``)."""

from __future__ import annotations

from pathlib import Path

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import Environment, EnvironmentRequest
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.store.records import Outcome, RunStatus

PROJECT = ProjectSettings(source="pkg", tests="tests")
TESTS = """\
import inspect


def test_a_fails():
    assert 1 + 1 == 3


def test_b_no_module_was_looked_for():
    assert not inspect._filesbymodname, len(inspect._filesbymodname)
"""


def _environment(tree: Path, home: Path) -> Environment:
    return (
        make_plugins(entry_points=False)
        .create("environment", "interpreter")
        .build(EnvironmentRequest(project=PROJECT, tree=tree, home=home))
    )


def test_a_failing_test_costs_no_look_at_every_loaded_module(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "tests").mkdir()
    (tree / "tests" / "test_it.py").write_text(TESTS)

    run = run_tests(
        _environment(tree, tmp_path / "home"), tree, ["tests"], project=PROJECT, label="r",
        timeout=120, hostile=False,
    )  # fmt: skip

    assert run.status == RunStatus.OK, run.tampering or run.detail
    assert run.outcomes == {
        "tests/test_it.py::test_a_fails": Outcome.FAILED,
        "tests/test_it.py::test_b_no_module_was_looked_for": Outcome.PASSED,
    }, run.failures
    assert run.failures["tests/test_it.py::test_a_fails"] == "assert (1 + 1) == 3"
