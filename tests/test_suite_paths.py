"""The suite at a task's commit: where the repository's tests were then, not where
``project.tests`` says they are today."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import components
from bugbout.core.audit.base_run import run_base
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings, PluginChoice, ProjectSettings
from bugbout.core.plumbing.testruns.suite import suite_of, suite_paths, writing_folder
from bugbout.core.plumbing.tools import Tools
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.report.report_tasks import TaskPage, environment_line
from bugbout.core.store.records import Task, TaskIssue
from bugbout.core.store.store import Store
from bugbout.testing import RepositoryBuilder
from suite_history import OPS, TEST_ADD, TEST_DOUBLE, TEST_ROOT, build_moved_tests


def tree(root: Path, *files: str) -> Path:
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")
    return root


@pytest.mark.parametrize(
    ("module", "folder"),
    [
        ("tests/test_a.py", "tests"),
        ("testing/python/test_a.py", "testing"),
        ("src/pkg/tests/unit/test_a.py", "src/pkg/tests"),
        ("pkg/sub/test_a.py", "pkg/sub"),
        ("test_requests.py", "test_requests.py"),
    ],
)
def test_a_test_modules_suite_is_its_outermost_tests_folder(module: str, folder: str) -> None:
    assert suite_of(module) == folder


def test_the_setting_when_the_tree_has_it(tmp_path: Path) -> None:
    root = tree(tmp_path, "tests/test_a.py", "tests/unit/test_b.py")
    assert suite_paths(root, "tests", ["tests/unit/test_b.py"]) == ("tests",)


def test_the_task_test_folders_when_the_setting_is_missing(tmp_path: Path) -> None:
    root = tree(tmp_path, "testing/python/test_a.py", "test_root.py")
    found = suite_paths(root, "tests", ["testing/python/test_a.py", "test_root.py"])
    assert found == ("testing", "test_root.py")
    assert writing_folder(found, "tests") == "testing"
    assert writing_folder(("test_root.py",), "tests") == "."


def test_both_when_the_task_tests_live_outside_the_setting(tmp_path: Path) -> None:
    root = tree(tmp_path, "tests/test_a.py", "src/pkg/tests/test_b.py")
    found = suite_paths(root, "tests", ["src/pkg/tests/test_b.py", "tests/test_a.py"])
    assert found == ("tests", "src/pkg/tests")
    assert writing_folder(found, "tests") == "tests"


def test_never_a_path_the_tree_lacks(tmp_path: Path) -> None:
    root = tree(tmp_path, "pkg/core.py")
    assert suite_paths(root, "tests", ["test_new.py", "test/test_new.py"]) == ()
    assert writing_folder((), "tests") == "tests"


@pytest.mark.slow
def test_a_bout_runs_the_suite_where_it_was_at_the_fix(tmp_path: Path) -> None:
    """The tests were in ``test/`` when the bug was fixed and are in ``tests/`` (the
    setting) now: the suite runs after the race find ``test/``, so the patch that breaks
    a test there is caught, and the agents are told to write their tests there."""
    repo = tmp_path / "calc"
    fix = build_moved_tests(repo)
    result = subprocess.run(
        [sys.executable, "-m", "bugbout", "run"],
        cwd=repo, capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    store = repo / ".bugbout"
    task = fix[:12]
    matrix = json.loads((store / "matrices" / f"{task}.json").read_text())
    assert matrix["authors"]["(suite)"] == ["test/test_double.py::test_double"]
    assert matrix["outcomes"]["breaking"]["test/test_double.py::test_double"] == "failed"
    assert matrix["outcomes"]["correct"]["test/test_double.py::test_double"] == "passed"
    assert matrix["authors"]["correct"] == ["test/test_bb_correct__regression.py::test_regression"]
    audits = json.loads((store / "audits.json").read_text())[task]
    assert audits["breaking"]["regressions"] == ["test/test_double.py::test_double"]
    assert audits["correct"]["verdict"] == "resolved"
    base = json.loads(next((store / "evidence").glob("*/base-*.json")).read_text())["run"]
    assert base["status"] == "ok"
    assert base["outcomes"]["test/test_double.py::test_double"] == "passed"
    verdicts = json.loads((store / "verdicts.json").read_text())[task]
    assert verdicts["majority"]["pick"] == "correct"
    assert json.loads((store / "oracles.json").read_text())[task]["suite"] == ["test"]


def test_the_task_page_says_where_the_tests_were() -> None:
    page = TaskPage(id="t", environment="interpreter python3", suite=["test", "test_x.py"])
    assert environment_line(page) == "interpreter python3; tests in test, test_x.py"
    assert environment_line(TaskPage(id="t", environment="interpreter python3")) == (
        "interpreter python3"
    )


def test_the_base_run_holds_the_setting_and_the_task_tests_elsewhere(
    tmp_path: Path, plugins: Plugins, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tests/`` exists, but the fix's tests live in the package: the task's suite is
    both, and so is its base run."""
    if not components.FOUND["bubblewrap"]():
        components.missing("bubblewrap", "the base run is confined by bubblewrap")
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "home"))
    repo = RepositoryBuilder(tmp_path / "repo")
    parent = repo.commit(
        "Initial commit",
        {
            "src/calc/__init__.py": "",
            "src/calc/ops.py": OPS,
            "tests/test_double.py": TEST_DOUBLE,
            "src/calc/tests/__init__.py": "",
            "src/calc/tests/test_root.py": TEST_ROOT,
        },
    )
    fix = repo.commit(
        "Fix the sign (#1)",
        {"src/calc/ops.py": OPS.replace("abs(b)", "b"), "src/calc/tests/test_add.py": TEST_ADD},
    )
    task = Task(
        id=Task.id_for(fix), sha=fix, parent=parent, date="2023-11-14T23:13:20+00:00",
        title="Fix the sign (#1)", issue=TaskIssue(number=1), source_files=["src/calc/ops.py"],
        test_files=["src/calc/tests/test_add.py"],
        changed_test_files=["src/calc/tests/test_add.py"],
    )  # fmt: skip
    settings = BoutSettings(
        project=ProjectSettings(source="src/calc"),
        environment=PluginChoice(name="interpreter"),
        sandbox=PluginChoice(name="bubblewrap"),
        root=repo.path,
    )
    tools = Tools.build(settings, plugins, Store(tmp_path / "store"))
    with Git(repo.path) as git:
        bench = tools.bench(task, tools.checkouts(git), 120)
        assert bench.suite == ("tests", "src/calc/tests")
        base = run_base(task, bench, coverage=False)
    assert base.run.outcomes == {
        "tests/test_double.py::test_double": "passed",
        "src/calc/tests/test_root.py::test_add_zero": "passed",
        "src/calc/tests/test_add.py::test_negative": "failed",
    }
