"""A small tree run by bugbout's pytest runner on this interpreter: what the tests of a
test run's own cost share."""

from __future__ import annotations

from pathlib import Path

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import EnvironmentRequest
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.store.records import TestRun

PROJECT = ProjectSettings(source="pkg", tests="tests")


def run_small(
    tmp_path: Path,
    tests: dict[str, str],
    *,
    project: ProjectSettings = PROJECT,
    hostile: bool = True,
) -> TestRun:
    """``tests`` (a file name in ``tests/`` and its text, each) beside an empty package
    ``pkg`` in ``tmp_path / "tree"``, run by bugbout in the interpreter environment."""
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "tests").mkdir()
    for name, text in tests.items():
        (tree / "tests" / name).write_text(text)
    request = EnvironmentRequest(project=project, tree=tree, home=tmp_path / "home")
    builder = make_plugins(entry_points=False).create("environment", "interpreter")
    return run_tests(
        builder.build(request), tree, ["tests"], project=project, label="r", timeout=120,
        hostile=hostile,
    )  # fmt: skip
