#!/usr/bin/env python
"""Selection by function on a real suite: the share of the suite each one-function patch
runs, against selecting by file, and whether it is sound.

click (cloned from the mirror into the cache when ``--repo`` is not given) at a fixed
commit, or the tree ``--repo`` gives, its package and tests in ``--source`` and
``--tests``, its pytest options in ``--pytest-args``. Its suite runs once under the
coverage plugin, as a task's base run does, with this interpreter (the ``interpreter``
environment; unconfined: its test dependencies must be importable). Then ``N`` functions of
the package that some test runs, drawn with ``--seed``, are each broken by a patch of
one line (:mod:`bugbout.testing.breaks`: it raises, or returns ``None``, the two in
turn), and for each patch it reports:

- the share of the suite its selection runs (``verdicts.tests=affected``);
- the share selecting by file would run (every test that ran a function of the file);
- the tests that passed on the unfixed code and fail with the patch when the whole
  suite runs, and how many of them the selection left out: soundness wants none.

Per patch, then min / median / max, in ``.bench/selection.md`` and
``.bench/selection.json``. A report, not a test: the exit code is 0 whatever it finds.

    python benchmarks/bench_selection.py [--patches N] [--seed S]
        [--repo PATH --source DIR --tests DIR --pytest-args=ARGS]
"""

from __future__ import annotations

import argparse
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import timing

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.contract.types import TestRunnerPlugin
from bugbout.core.plumbing.environments.environment import Environment, EnvironmentRequest
from bugbout.core.plumbing.selection.affected import (
    BaseRun,
    CoverageMap,
    changed_in_functions,
    read_coverage,
    select,
)
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.plumbing.trees.patch import diff_trees
from bugbout.core.store.race_records import ChangeArea
from bugbout.core.store.records import Outcome, RunStatus, TestRun
from bugbout.testing.breaks import HOW, breakable, broken

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache" / "selection"
OUTPUT = HERE.parent / ".bench"
MIRROR = Path("/work/.mirror/pallets+click/repo")
COMMIT = "2c8cd3ac"
CLICK = ("src/click", "tests", "-m 'not stress'")
"""click's package, tests and pytest options: the defaults."""


def no_confinement(argv: list[str], tree: Path, writable: tuple[Path, ...]) -> list[str]:
    return argv


def passing(run: TestRun) -> set[str]:
    return {test for test, outcome in run.outcomes.items() if outcome == Outcome.PASSED}


def regressions(base: TestRun, patched: TestRun) -> tuple[set[str], set[str]]:
    """The tests that passed on the unfixed code and do not with the patch (they fail, or
    their module no longer collects), and apart those that are simply gone: a node id
    made anew each run (a parameter holding the time) is no test the patch broke."""
    lost, gone = set(), set()
    for test in passing(base):
        if test in patched.outcomes or test.split("::", 1)[0] in patched.collection_errors:
            if patched.outcomes.get(test) != Outcome.PASSED:
                lost.add(test)
        else:
            gone.add(test)
    return lost, gone


def candidates(
    tree: Path, coverage: CoverageMap, project: ProjectSettings
) -> list[tuple[str, str]]:
    """(file, function) of the package that some test ran and none ran outside a test."""
    ran = {number for trace in coverage.traces for number in trace} - set(coverage.outside)
    keys = {(coverage.files[file], line) for file, line in (coverage.functions[n] for n in ran)}
    found = []
    paths = {path for source in project.source for path in (tree / source).rglob("*.py")}
    for path in sorted(paths):
        relative = path.relative_to(tree).as_posix()
        functions = breakable(path.read_text())
        found += [(relative, name) for name, line in functions.items() if (relative, line) in keys]
    return found


def measure(
    tree: Path, project: ProjectSettings, options: argparse.Namespace, scratch: Path
) -> dict[str, Any]:
    plugins = make_plugins()
    environment: Environment = plugins.create("environment", "interpreter").build(
        EnvironmentRequest(project=project, tree=tree, home=scratch / "home")
    )
    runner = plugins.create(TestRunnerPlugin, "pytest")

    def suite(where: Path, chunks: list[bytes] | None = None) -> TestRun:
        run = run_tests(
            environment, where, [project.tests], project=project, label="bench", timeout=3600,
            confine=no_confinement, coverage=chunks,
        )  # fmt: skip
        if run.status != RunStatus.OK:
            raise SystemExit(f"the suite ended {run.status.value}: {run.detail[-500:]}")
        return run

    chunks: list[bytes] = []
    base = BaseRun(task_id=tree.name, run=suite(tree, chunks), coverage=read_coverage(chunks))
    total = len(base.run.outcomes)
    drawn = random.Random(options.seed).sample(
        candidates(tree, base.coverage, project), options.patches
    )  # fmt: skip
    rows = []
    for number, (path, name) in enumerate(drawn):
        how = HOW[number % len(HOW)]
        patched = scratch / "patched"
        shutil.copytree(tree, patched, ignore=shutil.ignore_patterns(".git"))
        (patched / path).write_text(broken((tree / path).read_text(), name, how))
        patch = diff_trees(tree, patched, source=project.source, tests=project.tests)
        scope = changed_in_functions(tree, patch.source, patch.area(ChangeArea.SOURCE), runner)
        selection = select(base, scope, suite=(project.tests,))
        lost, gone = regressions(base.run, suite(patched))
        shutil.rmtree(patched)
        by_file = sum(path in base.coverage.files_of(test) for test in base.coverage.tests)
        rows.append(
            {
                "file": path,
                "function": name,
                "how": how,
                "everything": selection.everything,
                "share": round(sum(map(selection.runs, base.run.outcomes)) / total, 4),
                "share_by_file": round(by_file / total, 4),
                "regressions": len(lost),
                "missed": sorted(test for test in lost if not selection.runs(test)),
                "gone": len(gone),
            }
        )
        print(f"{path} {name} ({how}): {rows[-1]['share']:.1%} of the suite", flush=True)
    return {"tests": total, "functions": len(base.coverage.functions), "patches": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patches", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repo", type=Path, help="a project's tree (default: click's, cloned)")
    parser.add_argument("--source", default=CLICK[0], help="its package, in the tree")
    parser.add_argument("--tests", default=CLICK[1], help="its tests, in the tree")
    parser.add_argument("--pytest-args", default=CLICK[2], help="its pytest options, quoted")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    options = parser.parse_args()
    CACHE.mkdir(parents=True, exist_ok=True)
    tree = options.repo or CACHE / "click"
    if options.repo is None and not tree.exists():
        subprocess.run(["git", "clone", "-q", str(MIRROR), str(tree)], check=True)
        subprocess.run(["git", "-C", str(tree), "checkout", "-q", COMMIT], check=True)
    project = ProjectSettings(
        source=options.source, tests=options.tests, pytest_args=shlex.split(options.pytest_args)
    )
    head = ["git", "-C", str(tree), "rev-parse", "--short", "HEAD"]
    commit = subprocess.run(head, capture_output=True, text=True, check=False).stdout.strip()
    with tempfile.TemporaryDirectory(dir=CACHE) as scratch:
        found = measure(tree, project, options, Path(scratch))
    rows = found["patches"]
    shares = [row["share"] for row in rows]
    result = {
        "benchmark": "selection",
        "project": tree.name,
        "commit": commit,
        "seed": options.seed,
        **found,
        "share": timing.spread(shares),
        "share_by_file": timing.spread([row["share_by_file"] for row in rows]),
        "share_over_by_file": timing.spread(
            [row["share"] / row["share_by_file"] for row in rows if row["share_by_file"]]
        ),
        "unsound_patches": sum(bool(row["missed"]) for row in rows),
        "patches_without_regression": sum(not row["regressions"] for row in rows),
    }
    lines = [
        f"{tree.name} at {commit}: {found['tests']} tests, {len(rows)} one-function patches",
        "",
        "| function | broken by | suite run (function) | suite run (file) | regressions | missed |",
        "|---|---|---|---|---|---|",
        *(
            f"| `{row['file']}` `{row['function']}` | {row['how']} | "
            f"{row['everything'] or format(row['share'], '.1%')} | "
            f"{row['share_by_file']:.1%} | {row['regressions']} | {len(row['missed'])} |"
            for row in rows
        ),
        "",
        "share of the suite run, min / median / max: by function "
        + " / ".join(f"{result['share'][k]:.1%}" for k in ("min", "median", "max"))  # type: ignore[index]
        + "; by file "
        + " / ".join(f"{result['share_by_file'][k]:.1%}" for k in ("min", "median", "max"))  # type: ignore[index]
        + "; by function over by file, per patch "
        + " / ".join(f"{result['share_over_by_file'][k]:.2f}" for k in ("min", "median", "max")),  # type: ignore[index]
        f"patches whose selection missed a regression: {result['unsound_patches']} of {len(rows)}"
        f" ({result['patches_without_regression']} broke no test)",
        "passing tests gone from a patch's run with no collection error (a node id made anew "
        f"each run), not counted: {max((row['gone'] for row in rows), default=0)} at most",
    ]
    timing.write_result(options.output, "selection", result, "\n".join(lines))
    sys.exit(0)


if __name__ == "__main__":
    main()
