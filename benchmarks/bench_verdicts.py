#!/usr/bin/env python
"""Verdict runs on a large suite: a patch's tests with ``verdicts.tests=affected`` against
``all`` and against raw pytest, and what the once-per-task coverage map costs.

Generates (and caches) a package of M modules of F functions, each function calling the
next module's, and a suite of at least 5,000 tests, each calling one function. A patch
changes one function body. Once, untimed, the base run makes the coverage map and the
patch's selection. Then, interleaved in rotated order and repeated, it times:

- ``raw pytest``: ``python -m pytest -q`` on the whole suite, no bugbout;
- ``all``: :func:`bugbout.core.plumbing.testruns.testrun.run_tests` on the whole suite (bugbout's
outcome
  plugin and canaries), as a patch's suite run with ``verdicts.tests=all``;
- ``affected``: the same with the patch's selection;
- ``base run (coverage)``: the whole suite with the coverage tracer, made once per task;
- ``raw pytest -n 2`` when pytest-xdist is installed.

Ratios are paired (both sides timed in the same round) against ``raw pytest``. Writes
``.bench/verdicts.json`` and ``.bench/verdicts.md``. A report, not a test: exit code 0.

    python benchmarks/bench_verdicts.py [--repeat K] [--modules M] [--tests T]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from importlib.metadata import entry_points
from pathlib import Path

from timing import paired_ratios, ratio_table, rotations, run_process

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.contract.types import TestRunnerPlugin
from bugbout.core.plumbing.environments.environment import Environment, EnvironmentRequest
from bugbout.core.plumbing.selection.affected import (
    BaseRun,
    changed_in_functions,
    read_coverage,
    select,
)
from bugbout.core.plumbing.testruns.testrun import outcomes_plugin_dir, run_tests
from bugbout.core.plumbing.trees.patch import diff_trees
from bugbout.core.store.race_records import ChangeArea
from bugbout.core.store.records import RunStatus

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache" / "verdicts"
OUTPUT = HERE.parent / ".bench"
PROJECT = ProjectSettings(source="src/pkg", tests="tests")
BASELINE = "raw pytest"


def generate(root: Path, modules: int, functions: int, tests: int) -> None:
    """The package and its suite (``tests`` tests per module), unless already there."""
    marker = root / f".made-3-{modules}-{functions}-{tests}"
    if marker.exists():
        return
    package, suite = root / "src/pkg", root / "tests"
    package.mkdir(parents=True, exist_ok=True)
    suite.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    for m in range(modules):
        after = (m + 1) % modules
        body = [f"from pkg import m{after}\n"] if m + 1 < modules else []
        for f in range(functions):
            # every f returns x + 1, through up to five modules: every test passes on base
            call = f"m{after}.f{f}(x) - x - 1" if m + 1 < modules and m % 5 != 4 else "0"
            body.append(f"\n\ndef f{f}(x):\n    return x + 1 + {call}\n")
        (package / f"m{m}.py").write_text("".join(body))
        lines = [f"from pkg.m{m} import *  # noqa\n"]
        for t in range(tests):
            lines.append(f"\n\ndef test_{m}_{t}():\n    assert f{t % functions}({t}) == {t + 1}\n")
        (suite / f"test_m{m}.py").write_text("".join(lines))
    # its own pytest section: the tree is its own rootdir, whatever folder holds it
    (root / "pyproject.toml").write_text('[project]\nname = "pkg"\n\n[tool.pytest.ini_options]\n')
    marker.write_text("")


def no_confinement(argv: list[str], tree: Path, writable: tuple[Path, ...]) -> list[str]:
    return argv


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--modules", type=int, default=50)
    parser.add_argument("--functions", type=int, default=10)
    parser.add_argument("--tests", type=int, default=100, help="tests per module")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    cache = CACHE / f"{args.modules}-{args.functions}-{args.tests}"
    tree = cache / "tree"
    generate(tree, args.modules, args.functions, args.tests)
    patched = cache / "patched"
    generate(patched, args.modules, args.functions, args.tests)
    # the patch: one function body of a module in the middle of the call chains
    middle = args.modules // 2 + 3
    target = patched / f"src/pkg/m{middle}.py"
    target.write_text(
        target.read_text().replace("def f3(x):\n    return x + 1", "def f3(x):\n    return x + 2")
    )
    patch = diff_trees(tree, patched, source=PROJECT.source, tests=PROJECT.tests)
    plugins = make_plugins()
    environment: Environment = plugins.create("environment", "interpreter").build(
        EnvironmentRequest(project=PROJECT, tree=tree, home=cache / "home")
    )
    runner = plugins.create(TestRunnerPlugin, "pytest")

    def bugbout_run(coverage: bool = False, **options: object) -> tuple[float, object]:
        started = time.perf_counter()
        chunks: list[bytes] | None = [] if coverage else None
        run = run_tests(
            environment, tree, list(options.get("targets", ["tests"])),  # type: ignore[arg-type]
            project=PROJECT, label="bench", timeout=3600, confine=no_confinement,
            skip=options.get("skip", frozenset()), coverage=chunks,  # type: ignore[arg-type]
        )  # fmt: skip
        elapsed = time.perf_counter() - started
        assert run.status == RunStatus.OK, run.detail
        return elapsed, (run, chunks)

    _, (base_run, chunks) = bugbout_run(coverage=True)  # type: ignore[misc]
    base = BaseRun(task_id="bench", run=base_run, coverage=read_coverage(chunks))
    scope = changed_in_functions(tree, patch.source, patch.area(ChangeArea.SOURCE), runner)
    selection = select(base, scope, suite=("tests",))
    selected = sum(1 for test in base.run.outcomes if selection.runs(test))
    raw = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    measures = {
        BASELINE: lambda: _time(raw, tree),
        "all": lambda: bugbout_run()[0],
        "affected": lambda: bugbout_run(targets=selection.targets, skip=selection.skip)[0],
        "base run (coverage)": lambda: bugbout_run(coverage=True)[0],
    }
    if any(point.name == "xdist" for point in entry_points(group="pytest11")):
        measures["raw pytest -n 2"] = lambda: _time([*raw, "-n", "2"], tree)
    rounds = []
    for order in rotations(list(measures), args.repeat):
        rounds.append({name: measures[name]() for name in order})
    ratios = paired_ratios(rounds, BASELINE)
    medians = {name: statistics.median(r[name] for r in rounds) for name in measures}
    result = {
        "benchmark": "verdicts",
        "python": platform.python_version(),
        "tests": len(base.run.outcomes),
        "selected": selected,
        "map_bytes": sum(len(c) for c in chunks or []),
        "xdist": "xdist" in " ".join(measures),
        "median_s": {name: round(value, 3) for name, value in medians.items()},
        "ratios_to_raw_pytest": ratios,
        "rounds": rounds,
    }
    lines = [
        f"Suite: {result['tests']} tests; the patch selects {selected}.",
        "",
        *ratio_table(rounds, BASELINE, unit="s"),
    ]
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "verdicts.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.output / "verdicts.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def _time(argv: list[str], tree: Path) -> float:
    """The wall time of ``argv`` as a whole process in a session of its own, as bugbout
    starts its test runs (the kernel's autogroups would favour one side else)."""
    env = {"PYTHONPATH": f"{tree / 'src'}:{outcomes_plugin_dir()}", "PATH": "/usr/bin:/bin"}
    try:
        return run_process(argv, cwd=tree, env=env).sample.wall
    except RuntimeError as exc:  # a run that failed measures nothing
        raise SystemExit(str(exc)) from None


if __name__ == "__main__":
    sys.exit(main())
