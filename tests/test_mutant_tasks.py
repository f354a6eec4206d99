"""The ``mutants`` miner on a small real project: real git, real pytest, the interpreter's
environment."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import (
    BoutSettings,
    PluginChoice,
    ProjectSettings,
    TasksSettings,
)
from bugbout.core.mine.injection import REF_PREFIX, SuiteRunner
from bugbout.core.pipeline import compute_oracles, mine_tasks
from bugbout.core.pipeline import mining as pipeline_mining
from bugbout.core.plumbing.trees.checkout import Checkouts
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.store.records import OracleSet, TaskSet
from bugbout.core.store.store import Store
from bugbout.testing import RepositoryBuilder
from cli_runs import bugbout

AREA = '''\
"""Areas and bounds."""


def square(side):
    # a square's area
    return side * side


def clamp(value, low, high):
    if value < low:
        return low
    if value > high:
        return high
    return value


def twice(items):
    items.append(1)  # once
    items.append(1)  # twice
    return items


def untested(x):
    return x + 1
'''

NAMES = """\
def shout(name):
    return name.upper() + "!"
"""

TEST_AREA = """\
from geo.area import clamp, square, twice


def test_square():
    expected_area_of_three = 9
    assert square(3) == expected_area_of_three


def test_clamp_low():
    assert clamp(-5, 0, 10) == 0, "clamped to the low bound"


def test_clamp_high():
    assert clamp(50, 0, 10) == 10


def test_clamp_inside():
    assert clamp(5, 0, 10) == 5


def test_twice():
    assert twice([]) == [1, 1]
"""

TEST_NAMES = """\
from geo.names import shout


def test_shout():
    assert shout("ada") == "ADA!"
"""

PROJECT = ProjectSettings(source="src/geo", tests="tests")


def build(path: Path) -> RepositoryBuilder:
    repo = RepositoryBuilder(path)
    repo.commit(
        "A small package",
        {
            "pyproject.toml": '[project]\nname = "geo"\nrequires-python = ">=3.9"\n',
            "src/geo/__init__.py": "",
            "src/geo/area.py": AREA,
            "src/geo/names.py": NAMES,
            "tests/test_area.py": TEST_AREA,
            "tests/test_names.py": TEST_NAMES,
        },
    )
    return repo


def settings(root: Path, **miner: object) -> BoutSettings:
    return BoutSettings(
        project=PROJECT,
        miner=PluginChoice(name="mutants", **miner),
        environment=PluginChoice(name="interpreter"),
        tasks=TasksSettings(reruns=1),
        root=root,
    )


class Counting(SuiteRunner):
    """A runner that keeps the targets and skips of each run on a mutant."""

    runs: list[tuple[list[str], frozenset[str]]] = []

    def run(self, environment, tree, targets, *, label, skip=frozenset(), **rest):  # type: ignore[no-untyped-def]
        if label == "mutant":
            self.runs.append((list(targets), skip))
        return super().run(environment, tree, targets, label=label, skip=skip, **rest)


@pytest.fixture(scope="module")
def mined(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[RepositoryBuilder, TaskSet, OracleSet, list[tuple[list[str], frozenset[str]]]]:
    """Every mutant of the package mined once (no limit per function), with its oracle."""
    root = tmp_path_factory.mktemp("mutants")
    repo = build(root / "repo")
    chosen = settings(repo.path, limit=100, **{"per-function": 100})
    plugins = make_plugins(entry_points=False)
    store = Store(root / ".bugbout")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BUGBOUT_HOME", str(root / "home"))
        patch.setattr(pipeline_mining, "suite_runner", _counting)
        tasks = mine_tasks(chosen, plugins, store)
        oracles = compute_oracles(chosen, plugins, store, tasks)
    return repo, tasks, oracles, Counting.runs


def _counting(chosen: BoutSettings, plugins: object) -> SuiteRunner:
    from bugbout.core.plumbing.tools import Tools

    tools = Tools.build(chosen, plugins, Store(chosen.store_dir))  # type: ignore[arg-type]
    builder = tools.environments.builder
    return Counting(builder, chosen.project, tools.home, tools.confine, chosen.tasks.timeout)


def _pytest(tree: Path, tests: list[str]) -> tuple[int, int]:
    """pytest's exit code on ``tests`` in ``tree``, and how many failed."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--tb=no", "-p", "no:cacheprovider", *tests],
        cwd=tree,
        env={"PYTHONPATH": str(tree / "src"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    failed = re.search(r"(\d+) failed", done.stdout)
    return done.returncode, int(failed[1]) if failed else 0


@pytest.mark.slow
def test_every_kept_mutant_is_caught_and_its_fix_is_the_commit(mined, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo, tasks, oracles, _ = mined
    head = repo.head()
    assert len(tasks.tasks) >= 8
    for task in tasks.tasks:
        assert task.tier == "injected"
        assert repo.git("rev-parse", f"{task.sha}^{{tree}}") == repo.git("rev-parse", "HEAD^{tree}")
        assert repo.git("rev-parse", f"{task.parent}^") == head
        assert repo.git("rev-parse", f"{REF_PREFIX}{task.id}") == task.sha
        oracle = oracles.root[task.id]
        assert oracle.status == "ok", oracle.reason
        assert oracle.fail_to_pass, task.id
        before, after = tmp_path / task.id / "mutant", tmp_path / task.id / "fixed"
        with Git(repo.path) as git:
            git.export(task.parent, before)
            git.export(task.sha, after)
        assert _pytest(before, oracle.fail_to_pass) == (1, len(oracle.fail_to_pass))
        assert _pytest(after, oracle.fail_to_pass) == (0, 0)
        for test in oracle.fail_to_pass:
            assert test in task.problem_statement
    assert repo.git("status", "--porcelain") == ""
    assert repo.git("rev-parse", "HEAD") == head


@pytest.mark.slow
def test_survivors_and_duplicates_are_left_out(mined) -> None:  # type: ignore[no-untyped-def]
    repo, tasks, _, _ = mined
    assert tasks.excluded["survived"] >= 3  # untested(), clamp's boundaries, ...
    assert tasks.excluded["duplicate"] >= 1  # either twice() append removed
    assert tasks.examined == len(tasks.tasks) + sum(tasks.excluded.values())
    diffs = [repo.git("diff", task.parent, task.sha) for task in tasks.tasks]
    assert not any("@@ def untested" in diff for diff in diffs)
    restores_append = [d for d in diffs if "+    items.append(1)" in d and "-    items" not in d]
    # removing either append reads the same, and fails the same test: one is a duplicate
    assert len(restores_append) == 1
    assert len(set(diffs)) == len(diffs)


@pytest.mark.slow
def test_only_the_tests_that_ran_the_file_are_run(mined) -> None:  # type: ignore[no-untyped-def]
    _, _, _, runs = mined
    assert runs
    for targets, _ in runs:
        assert "tests/test_names.py" not in targets or targets == ["tests/test_names.py"]
    assert ["tests/test_names.py"] in [targets for targets, _ in runs]


@pytest.mark.slow
def test_statements_never_show_the_mutation_or_the_tests(mined) -> None:  # type: ignore[no-untyped-def]
    repo, tasks, _, _ = mined
    test_lines = [
        line.strip() for line in (TEST_AREA + TEST_NAMES).splitlines() if len(line.strip()) > 8
    ]
    shown = 0
    for task in tasks.tasks:
        diff = repo.git("diff", task.sha, task.parent)
        mutated = [line[1:].strip() for line in diff.splitlines() if line.startswith("+ ")]
        for line in mutated:
            assert line not in task.problem_statement, (line, task.problem_statement)
        for line in test_lines:
            assert line not in task.problem_statement
        shown += ": " in task.problem_statement.split("\n", 2)[2]
        assert "injected" not in task.problem_statement
    assert shown  # some failures are shown (assertion values, errors)


@pytest.mark.slow
def test_agents_get_a_tree_without_history(mined, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo, tasks, _, _ = mined
    task = tasks.tasks[0]
    with Git(repo.path) as git:
        tree = Checkouts(git, tmp_path / "checkouts").base(task.parent)
    assert not (tree / ".git").exists()
    found = subprocess.run(
        ["grep", "-rl", "bugbout/mutants", str(tree)], capture_output=True, check=False
    )
    assert found.stdout == b""


@pytest.mark.slow
def test_bugbout_tasks_with_the_mutants_miner(tmp_path: Path) -> None:
    repo = build(tmp_path / "repo")
    config = {"defaults": ["base", "_self_"], "project": {"source": "src/geo", "tests": "tests"}}
    (repo.path / "bugbout.yaml").write_text(json.dumps(config))
    result = bugbout(
        "tasks", "environment=interpreter", "miner=mutants", "miner.limit=3", "miner.seed=7",
        "tasks.reruns=1",
        cwd=repo.path, env={"BUGBOUT_HOME": str(tmp_path / "home")},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    stored = json.loads((repo.path / ".bugbout" / "tasks.json").read_text())
    assert len(stored["tasks"]) == 3
    assert {task["tier"] for task in stored["tasks"]} == {"injected"}
    assert all(task["scored"] for task in stored["tasks"]), stored
    oracles = json.loads((repo.path / ".bugbout" / "oracles.json").read_text())
    assert all(oracles[task["id"]]["fail_to_pass"] for task in stored["tasks"])


@pytest.mark.slow
def test_a_bout_on_injected_bugs_scores_and_reports_them(tmp_path: Path) -> None:
    """The race, the scores, the audit and the report take mutant tasks as any other:
    an agent that writes the package back as it was resolves every one of them."""
    repo = build(tmp_path / "repo")
    fixer = tmp_path / "fixer.py"
    fixer.write_text(
        "from pathlib import Path\n"
        f"Path('src/geo/area.py').write_text({AREA!r})\n"
        f"Path('src/geo/names.py').write_text({NAMES!r})\n"
    )
    config = {
        "defaults": ["base", "_self_"],
        "project": {"source": "src/geo", "tests": "tests"},
        "contestants": {
            "restorer": {"agent": "command", "command": [sys.executable, str(fixer)]},
            "idle": {"agent": "command", "command": [sys.executable, "-c", "print('no')"]},
        },
        "run": {"timeout": 60, "quotas": {"command": 2}},
    }
    (repo.path / "bugbout.yaml").write_text(json.dumps(config))
    result = bugbout(
        "run", "environment=interpreter", "miner=mutants", "miner.limit=2", "tasks.reruns=1",
        cwd=repo.path, env={"BUGBOUT_HOME": str(tmp_path / "home")},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads((repo.path / ".bugbout" / "report.json").read_text())
    assert [task["tier"] for task in report["tasks"]] == ["injected", "injected"]
    scores = {task["id"]: task["scores"] for task in report["tasks"]}
    assert all(s == {"idle": "no-fix", "restorer": "resolved"} for s in scores.values()), scores
    markdown = (repo.path / ".bugbout" / "report.md").read_text()
    assert "| injected |" in markdown
