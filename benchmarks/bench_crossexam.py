#!/usr/bin/env python
"""Cross-examination cost: pytest processes per task, and time against the raw pytest runs.

Builds a one-bug repository whose suite has about 200 tests, and the attempts of 4
contestants (a correct fix, a second correct fix, a wrong fix, a fix that breaks a suite
test; each with a regression test module) and 1 examiner (a test module), made with
``diff_trees`` on edited working copies as the race records them. Then, interleaved and
repeated, it times:

- ``cross_examine`` on the task (suite on, tests confined by the chosen sandbox);
- the raw pytest runs it needs: the same trees (parent, source changes, installed author
  modules) prepared beforehand and untimed, and ``python -m pytest`` started directly on
  each, with the same targets and the options and variables bugbout's runs must have
  (``raw_pytest.py``), one after the other - plainly, wrapped by the same sandbox (so
  the sandbox's own cost is apart from bugbout's), and wrapped by the sandbox and held
  by the guard to the same limits (``limits.tests``), as each of bugbout's runs is;
  and, apart, held so on trees where a run's canaries were planted beforehand (canary
  modules, twins, body twins), so that what bugbout's machinery costs is told from
  what the tests of its tamper evidence cost.

Every raw run starts in a session of its own, as bugbout's test runs do (the kernel's
autogroups would favour one side else). It reports the pytest processes per task
(against one per cell, the naive way), and ``cross_examine``'s wall and CPU time (read
from a cgroup, so what runs in a sandbox's pid namespace counts) over each raw measure's
of the same round: per pair, then min / median / max. A report, not a test: the exit
code is 0 whatever the numbers.

    python benchmarks/bench_crossexam.py [--repeat K] [--modules M] [--tests T] [--sandbox S]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any

import timing
from raw_pytest import Raw, raw_run, run_raw
from timing import Sample

from bugbout.core.contract.manager import Plugins, make_plugins
from bugbout.core.contract.settings import BoutSettings, PluginChoice, ProjectSettings
from bugbout.core.contract.types import TestRunnerPlugin
from bugbout.core.crossexam import crossexam
from bugbout.core.crossexam.crossexam import (
    cross_examine,
    is_column,
    plan_installation,
)
from bugbout.core.plumbing.bench import Bench
from bugbout.core.plumbing.confinement import confine as confinement
from bugbout.core.plumbing.confinement.confine import Confine
from bugbout.core.plumbing.environments.environment import Environment, EnvironmentRequest
from bugbout.core.plumbing.tampering.canaries import plant
from bugbout.core.plumbing.testruns.test_runner import TestRunner, TestRunRequest
from bugbout.core.plumbing.trees.checkout import Checkouts
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.plumbing.trees.patch import apply_patch, diff_trees
from bugbout.core.plumbing.trees.tree_files import install_file
from bugbout.core.store.race_records import Attempt, AttemptStatus
from bugbout.core.store.records import RunStatus, Task, TaskIssue, TestRun
from bugbout.core.store.verdict_records import SUITE, UNFIXED, Matrix
from bugbout.testing import RepositoryBuilder

CACHE = Path(__file__).parent / ".cache"
RESULTS = CACHE / "results-crossexam.json"
PROJECT = ProjectSettings(source="src/pkg", tests="tests")

BUGGY = "def middle(values):\n    ordered = sorted(values)\n    return ordered[len(ordered) // 2]\n"
FIXED = (
    "def middle(values):\n    ordered = sorted(values)\n    half = len(ordered) // 2\n"
    "    if len(ordered) % 2 == 0:\n        return (ordered[half - 1] + ordered[half]) / 2\n"
    "    return ordered[half]\n"
)
FIXED_TOO = "import statistics\n\n\ndef middle(values):\n    return statistics.median(values)\n"
WRONG = FIXED.replace("(ordered[half - 1] + ordered[half]) / 2", "ordered[half - 1]")


def module_source(index: int, tests: int) -> str:
    """A suite module of ``tests`` tests on ``f<index>`` (one parametrized test of 5 cases)."""
    lines = [f"import pytest\n\nfrom pkg.m{index} import f{index}\n"]
    for number in range(tests - 5):
        lines.append(
            f"\ndef test_f{index}_{number}():\n    assert f{index}({number}) == {number + index}\n"
        )
    lines.append(
        f"\n@pytest.mark.parametrize('x', range(5))\ndef test_f{index}_cases(x):\n"
        f"    assert f{index}(x) - x == {index}\n"
    )
    return "".join(lines)


def build(root: Path, modules: int, tests: int) -> tuple[RepositoryBuilder, Task]:
    """The repository and its one task; the suite has ``modules * tests + 1`` tests."""
    files = {
        "pyproject.toml": '[project]\nname = "pkg"\nrequires-python = ">=3.9"\n',
        "src/pkg/__init__.py": "",
        "src/pkg/mid.py": BUGGY,
        "tests/conftest.py": "",
        "tests/test_mid.py": "from pkg.mid import middle\n\n\ndef test_odd():\n"
        "    assert middle([3, 1, 2]) == 2\n",
    }
    for index in range(modules):
        files[f"src/pkg/m{index}.py"] = f"def f{index}(x):\n    return x + {index}\n"
        files[f"tests/test_m{index}.py"] = module_source(index, tests)
    repo = RepositoryBuilder(root / "repo")
    parent = repo.commit("Initial", files)
    sha = repo.commit(
        "Fix middle of even-length lists (#1)",
        {
            "src/pkg/mid.py": FIXED,
            "tests/test_mid.py": files["tests/test_mid.py"]
            + "\n\ndef test_even():\n    assert middle([4, 1, 3, 2]) == 2.5\n",
        },
    )
    task = Task(
        id=sha[:12],
        sha=sha,
        parent=parent,
        date="2023-11-14T23:13:20+00:00",
        title="Fix middle of even-length lists (#1)",
        issue=TaskIssue(number=1),
        source_files=["src/pkg/mid.py"],
        test_files=["tests/test_mid.py"],
        changed_test_files=["tests/test_mid.py"],
    )
    return repo, task


REGRESSION = "tests/test_regression.py"
FLOORS = ("raw", "raw_confined", "raw_held", "raw_planted")
"""The raw runs cross-examination is measured against: plain, confined by the sandbox,
and confined by the sandbox and held by the guard to ``limits.tests`` (bugbout's runs
are both); and, apart, held so on trees with a run's canaries planted (canary modules,
twins, body twins): what is left over it is bugbout's machinery, not the tests of its
tamper evidence."""


def regression(expected: str) -> str:
    return (
        "from pkg.mid import middle\n\n\ndef test_pair():\n"
        f"    assert middle([1, 2]) == {expected}\n\n\n"
        "def test_even():\n    assert middle([4, 1, 3, 2]) == 2.5\n"
    )


def attempts(task: Task, checkouts: Checkouts) -> list[Attempt]:
    """4 contestants and 1 examiner, their patches diffed from edited working copies."""
    edits: dict[str, tuple[str, dict[str, str]]] = {
        "good": ("contestant", {"src/pkg/mid.py": FIXED, REGRESSION: regression("1.5")}),
        "also-good": ("contestant", {"src/pkg/mid.py": FIXED_TOO, REGRESSION: regression("1.5")}),
        "wrong": ("contestant", {"src/pkg/mid.py": WRONG, REGRESSION: regression("1")}),
        "breaker": (
            "contestant",
            {
                "src/pkg/mid.py": FIXED,
                "src/pkg/m0.py": "def f0(x):\n    return x + 1\n",
                "tests/test_mid.py": regression("1.5"),
            },
        ),
        "examiner": ("examiner", {"tests/test_issue.py": regression("1.5")}),
    }
    base = checkouts.base(task.parent)
    made = []
    for name, (role, files) in edits.items():
        tree = checkouts.cache_dir / "edits" / name
        checkouts.working_copy(task.parent, tree)
        for path, text in files.items():
            (tree / path).write_text(text)
        patch = diff_trees(base, tree, source=PROJECT.source, tests=PROJECT.tests)
        checkouts.remove(tree)
        made.append(
            Attempt(
                task_id=task.id,
                contestant=name,
                role=role,
                key=name,
                agent="command",
                status=AttemptStatus.FINISHED,
                patch=patch,
            )
        )
    return made


def prepare_raw(
    task: Task, found: list[Attempt], checkouts: Checkouts, folder: Path, runner: TestRunner
) -> list[tuple[str, Path, list[str]]]:
    """The trees cross-examination runs on, made beforehand: (column, tree, targets)."""
    base = checkouts.base(task.parent)
    written = {
        attempt.contestant: {
            path: written_source(attempt, path, task, checkouts, folder)
            for path in crossexam.written_modules(attempt, runner)
        }
        for attempt in found
        if crossexam.written_modules(attempt, runner)
    }
    installed = plan_installation(written, base, runner)
    targets = [PROJECT.tests, *(module.path for module in installed)]
    columns: list[tuple[str, Attempt | None]] = [(UNFIXED, None)]
    columns += [(a.contestant, a) for a in found if is_column(a)]
    prepared = []
    for number, (name, attempt) in enumerate(columns):
        tree = checkouts.working_copy(task.parent, folder / f"raw{number}")
        if attempt is not None:
            apply_patch(tree, attempt.patch.source)
        for module in installed:
            install_file(tree, module.path, module.content)
        prepared.append((name, tree, targets))
    return prepared


def plant_raw(
    prepared: list[tuple[str, Path, list[str]]], base: Path
) -> list[tuple[str, Path, list[str]]]:
    """The prepared trees with a run's canaries planted as bugbout plants them (``base``:
    the tree before the edits, which tells the authors' test files apart), each with its
    targets as the run names them."""
    return [
        (name, tree, plant(tree, targets, lower=base).targets(targets))
        for name, tree, targets in prepared
    ]


def written_source(
    attempt: Attempt, path: str, task: Task, checkouts: Checkouts, folder: Path
) -> bytes:
    """A test module as the attempt wrote it (its test changes applied to a copy)."""
    tree = folder / f"src-{attempt.contestant}"
    if not tree.exists():
        checkouts.working_copy(task.parent, tree)
        apply_patch(tree, attempt.patch.tests)
    return (tree / path).read_bytes()


def raw_runs(
    environment: Environment,
    prepared: list[tuple[str, Path, list[str]]],
    confine: Confine | None,
    folder: Path,
    held: bool = False,
) -> list[Raw]:
    """``python -m pytest`` on each prepared tree (``confine``: wrapped by the sandbox;
    ``held``: also held by the guard to its limits), as ``raw_pytest`` makes a floor run;
    each its own HOME in ``folder``."""
    runs = []
    for number, (_, tree, targets) in enumerate(prepared):
        home = folder / f"home-{number}"
        home.mkdir(parents=True)
        runs.append(
            raw_run(
                environment, tree, targets, project=PROJECT, home=home, confine=confine, held=held
            )
        )
    return runs


class Counting:
    """A test runner that records the label of every run it makes, and makes it with
    ``runner``."""

    def __init__(self, runner: TestRunner) -> None:
        self.runner = runner
        self.labels: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.runner, name)

    def run(self, request: TestRunRequest) -> TestRun:
        self.labels.append(request.label)
        return self.runner.run(request)


def measure(
    root: Path, options: argparse.Namespace, plugins: Plugins, sandbox: Any
) -> tuple[Matrix, list[Attempt], int, list[dict[str, Sample]]]:
    """The matrix, the attempts, the pytest processes of one cross-examination, and each
    round's sample of each measure."""
    home = root / "home"
    repo, task = build(root, options.modules, options.tests)
    settings = BoutSettings(
        project=PROJECT,
        environment=PluginChoice(name="interpreter"),
        sandbox=PluginChoice(name=options.sandbox),
        root=repo.path,
    )
    confine = confinement.test_confinement(
        settings.limits.tests,
        sandbox,
        home,
        confinement.masked_paths(settings.repository, settings.store_dir, home),
    )
    runner = Counting(plugins.create(TestRunnerPlugin, "pytest"))

    with Git(repo.path) as git:
        checkouts = Checkouts(git, home / "checkouts")
        environment = plugins.create("environment", "interpreter").build(
            EnvironmentRequest(project=PROJECT, tree=checkouts.base(task.sha), home=home)
        )
        found = attempts(task, checkouts)
        base = checkouts.base(task.parent)

        def examine() -> Matrix:
            bench = Bench(checkouts, environment, PROJECT, 600, confine, ("tests",), runner)
            return cross_examine(task, found, bench, run_suite=True)

        matrix = examine()  # warm-up (the cached base tree, the page cache), counted
        processes = len(runner.labels)
        runner.labels.clear()
        prepared = prepare_raw(task, found, checkouts, root / "raw", runner)
        plain = raw_runs(environment, prepared, None, root / "homes-raw")
        confined = raw_runs(environment, prepared, confine, root / "homes-confined")
        held = raw_runs(environment, prepared, confine, root / "homes-held", held=True)
        planted = plant_raw(prepare_raw(task, found, checkouts, root / "planted", runner), base)
        with_canaries = raw_runs(environment, planted, confine, root / "homes-planted", held=True)
        actions = {
            "crossexam": examine,
            "raw": lambda: run_raw(plain),
            "raw_confined": lambda: run_raw(confined),
            "raw_held": lambda: run_raw(held),
            "raw_planted": lambda: run_raw(with_canaries),
        }
        rounds = [
            {name: timing.measure(actions[name])[0] for name in order}
            for order in timing.rotations(list(actions), options.repeat)
        ]
    return matrix, found, processes, rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--modules", type=int, default=10)
    parser.add_argument("--tests", type=int, default=20, help="tests per suite module")
    parser.add_argument("--sandbox", default="bubblewrap")
    options = parser.parse_args()
    CACHE.mkdir(parents=True, exist_ok=True)
    plugins = make_plugins(entry_points=False)
    sandbox = plugins.create("sandbox", options.sandbox)
    problem = sandbox.problem()
    if problem:
        print(f"sandbox {options.sandbox} cannot run here ({problem}); using none")
        options.sandbox = "none"
        sandbox = plugins.create("sandbox", "none")
    with tempfile.TemporaryDirectory(dir=CACHE, prefix="crossexam-") as scratch:
        matrix, found, processes, rounds = measure(Path(scratch), options, plugins, sandbox)
    walls = [{name: sample.wall for name, sample in one.items()} for one in rounds]
    cpus = [{name: sample.cpu for name, sample in one.items()} for one in rounds]
    measured = [one for one in cpus if None not in one.values()]
    rows = sum(len(tests) for tests in matrix.authors.values())
    result = {
        "benchmark": "crossexam",
        "sandbox": options.sandbox,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "suite_tests": len(matrix.authors[SUITE]),
        "contestants": sum(a.role == "contestant" for a in found),
        "examiners": sum(a.role == "examiner" for a in found),
        "columns": len(matrix.patches),
        "authors": len(matrix.authors),
        "rows": rows,
        "cells": rows * len(matrix.patches),
        "all_runs_ok": all(run.status == RunStatus.OK for run in matrix.runs.values()),
        "pytest_processes_per_task": processes,
        "pytest_processes_one_per_cell": len(matrix.authors) * len(matrix.patches),
        "repeat": options.repeat,
        "wall_rounds_s": walls,
        "cpu_rounds_s": measured,
        "wall": {raw: _over(walls, raw) for raw in FLOORS},
        "cpu": {raw: _over(measured, raw) for raw in FLOORS} if measured else None,
    }
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    report(result)
    sys.exit(0)


def _over(rounds: list[dict[str, Any]], raw: str) -> dict[str, Any]:
    """``cross_examine`` over the ``raw`` measure of the same round: per pair, and their
    min / median / max."""
    pairs = [{"crossexam": one["crossexam"], raw: one[raw]} for one in rounds]
    return {
        "per_pair": timing.pair_ratios(pairs, raw)["crossexam"],
        **timing.paired_ratios(pairs, raw)["crossexam"],
    }


def report(result: dict[str, Any]) -> None:
    print(
        f"task: {result['suite_tests']} suite tests, {result['contestants']} contestants, "
        f"{result['examiners']} examiner -> {result['columns']} columns x {result['authors']} "
        f"authors ({result['rows']} tests, {result['cells']} cells; "
        f"every run ok: {result['all_runs_ok']})"
    )
    print(
        f"pytest processes per task:    {result['pytest_processes_per_task']}  "
        f"(one per author and column: {result['pytest_processes_one_per_cell']})"
    )
    print(
        f"{result['repeat']} rounds; raw confined by {result['sandbox']}, raw held also by "
        "the guard, raw planted held so with a run's canaries"
    )
    for time_kind in ("wall", "cpu"):
        for raw, ratio in (result[time_kind] or {}).items():
            pairs = " ".join(f"{r:.2f}" for r in ratio["per_pair"])
            print(
                f"cross_examine / {raw} ({time_kind}): per pair {pairs}; min / median / max "
                f"{ratio['min']:.2f} / {ratio['median']:.2f} / {ratio['max']:.2f}"
            )
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
