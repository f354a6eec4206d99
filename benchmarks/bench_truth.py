#!/usr/bin/env python
"""Ground truth against the raw pytest runs it needs, on real tasks of a real project.

    python benchmarks/bench_truth.py [--repo PATH] [--tasks N] [--repeat K] [--against SRC]

The repository (by default the demo's, ``bugbout.example``, whose tests run on this
interpreter) is copied into ``benchmarks/.cache/`` with its ``bugbout.yaml`` (or one
written from ``--source`` and ``--tests``), and mined for its ``N`` newest tasks
(``miner.limit=N``, the GitHub issue source off). One untimed ``bugbout tasks`` builds
the environments (kept in ``benchmarks/.cache/truth-home``) and computes the ground
truth. Then, paired in rotated order, each round times:

- **ground truth**: ``bugbout tasks`` as a whole process, what a user waits for, with
  ``oracles.json`` removed first (its mining and environments reused);
- **the command kept**: ``bugbout tasks`` again with every oracle kept, so it runs no
  test: what the command costs whatever ground truth does (starting, importing, the
  settings, the mining and the statements reused), which splits ground truth's ratio in
  two: the command's share, and the marginal cost of the runs over the raw ones
  (ground truth less the command kept, over raw);
- **raw pytest**: for every task whose environment was built, the same before and after
  trees (prepared beforehand, untimed) run ``tasks.reruns`` times each with
  ``python -m pytest <the fix's test files>``, confined by the same sandbox, each in a
  session of its own, as bugbout's are, with the options and variables bugbout's runs
  must have (``raw_pytest.py``).

With ``--against SRC`` (another bugbout's source folder, such as a worktree's ``src``
at an older commit), each round also times **ground truth by SRC**: ``bugbout tasks``
run by that code (``PYTHONPATH=SRC``) on a copy of the repository of its own (so the two
stores never mix), so a change is measured against the code before it on the same
machine at the same moment, and against the same floor.

Wall time and CPU time (from a cgroup, which counts what runs in a sandbox's pid
namespace) are both reported as ground truth over raw, per pair, then min / median /
max. Writes ``.bench/truth.json`` and ``.bench/truth.md``. A report, not a test.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from raw_pytest import Raw, raw_run, run_raw
from timing import (
    Finished,
    Sample,
    kind_tables,
    measure,
    pair_ratios,
    rotations,
    run_process,
    spread,
    write_result,
)

from bugbout.config import compose_settings
from bugbout.core.plumbing.environments import repair
from bugbout.core.plumbing.environments.environment import EnvironmentRequest
from bugbout.core.plumbing.tools import Tools
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.store.records import OracleSet, TaskSet
from bugbout.core.store.store import ORACLES, TASKS, Store
from bugbout.core.truth.oracle import export_before
from bugbout.example import build_example

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
OUTPUT = HERE.parent / ".bench"
BASELINE = "raw pytest"
TRUTH = "ground truth"
KEPT = "the command kept"
MARGINAL = "ground truth - the command kept"
AGAINST = "ground truth by {}"


def clone(repo: Path, source: str, tests: str, suffix: str = "") -> Path:
    """A copy of ``repo`` in the cache (its untracked files too: ``bugbout.yaml``, an
    issues file), without its store, with a ``bugbout.yaml``; ``suffix`` ends its name."""
    target = CACHE / f"truth-{repo.resolve().name}{suffix}"
    if not target.exists():
        shutil.copytree(repo, target, symlinks=True, ignore=shutil.ignore_patterns(".bugbout"))
    config = target / "bugbout.yaml"
    if not config.exists():
        config.write_text(
            f"defaults: [base, _self_]\nproject: {{source: {source}, tests: {tests}}}\n"
        )
    return target


def bugbout_tasks(repo: Path, overrides: list[str], source: Path | None = None) -> Finished:
    """``bugbout tasks`` as a whole process (by the bugbout in ``source`` when given):
    its finished run."""
    argv = [sys.executable, "-m", "bugbout", "--quiet", "tasks", *overrides]
    env = {**os.environ, "PYTHONPATH": str(source)} if source is not None else None
    return run_process(argv, cwd=repo, env=env)


def prepared_runs(repo: Path, overrides: list[str], scratch: Path) -> list[Raw]:
    """Every raw run ground truth makes: for each task with an environment, each side,
    each rerun."""
    settings, plugins = compose_settings(repo, overrides)
    store = Store(repo / ".bugbout")
    tasks = store.read(TASKS, TaskSet) or TaskSet()
    oracles = store.read(ORACLES, OracleSet) or OracleSet()
    tools = Tools.build(settings, plugins, store)
    runs: list[Raw] = []
    with Git(repo) as git:
        for task in tasks.tasks:
            oracle = oracles.root.get(task.id)
            if oracle is None or oracle.status == "environment-error":
                continue
            before, after = scratch / task.id / "before", scratch / task.id / "after"
            export_before(git, task, before)
            git.export(task.sha, after)
            project = repair.with_added(settings.project, oracle.added)
            environment = tools.environments.builder.build(
                EnvironmentRequest(project=project, tree=after, date=task.date, home=tools.home)
            )
            for tree in (before, after):
                home = tree.parent / f"home-{tree.name}"
                home.mkdir()
                run = raw_run(
                    environment, tree, task.test_files, project=project, home=home,
                    confine=tools.confine,
                )  # fmt: skip
                runs += [run] * settings.tasks.reruns
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--repo", type=Path, help="a repository (default: the demo's)")
    parser.add_argument("--source", default="src")
    parser.add_argument("--tests", default="tests")
    parser.add_argument("--tasks", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--against", type=Path, help="another bugbout's source folder")
    options = parser.parse_args()
    CACHE.mkdir(parents=True, exist_ok=True)
    os.environ["BUGBOUT_HOME"] = str(CACHE / "truth-home")
    # the untimed run writes the bytecode of what bugbout imports, as an installation has
    # it (test runs, bugbout's and the raw ones, set PYTHONDONTWRITEBYTECODE themselves)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    if options.repo is None:
        options.repo = CACHE / "tally"
        if not options.repo.exists():
            build_example(options.repo)
    repo = clone(options.repo, options.source, options.tests)
    overrides = [f"miner.limit={options.tasks}", "issue-sources.github=null"]
    bugbout_tasks(repo, overrides)  # builds the environments, warms every cache
    other = None
    if options.against is not None:
        other = clone(options.repo, options.source, options.tests, "-against")
        bugbout_tasks(other, overrides, options.against)
    with tempfile.TemporaryDirectory(dir=CACHE, prefix="truth-trees-") as scratch:
        runs = prepared_runs(repo, overrides, Path(scratch))
        if not runs:
            print("no task of this repository has an environment: nothing to compare")
            sys.exit(0)
        actions = {
            TRUTH: lambda: ground_truth(repo, overrides),
            KEPT: lambda: bugbout_tasks(repo, overrides).sample,
            BASELINE: lambda: measure(lambda: run_raw(runs))[0],
        }
        if other is not None:
            actions[AGAINST.format(options.against)] = lambda: ground_truth(
                other, overrides, options.against
            )
        walls, cpus = timed_rounds(actions, options.repeat)
    report(options, runs, walls, cpus)


def ground_truth(repo: Path, overrides: list[str], source: Path | None = None) -> Sample:
    """``bugbout tasks`` with every oracle removed first (by the bugbout in ``source``)."""
    (repo / ".bugbout" / ORACLES).unlink()
    return bugbout_tasks(repo, overrides, source).sample


def timed_rounds(
    actions: dict[str, Callable[[], Sample]], repeat: int
) -> tuple[list[dict[str, float]], list[dict[str, float]]]:
    """``repeat`` rounds of every action in rotated order: each round's wall times and,
    where a cgroup gave them, its CPU times (with ground truth's marginal cost)."""
    walls: list[dict[str, float]] = []
    cpus: list[dict[str, float]] = []
    for order in rotations(list(actions), repeat):
        samples = {name: actions[name]() for name in order}
        walls.append(marginal({name: sample.wall for name, sample in samples.items()}))
        if all(sample.cpu is not None for sample in samples.values()):
            cpus.append(marginal({name: sample.cpu or 0.0 for name, sample in samples.items()}))
    return walls, cpus


def marginal(round_: dict[str, float]) -> dict[str, float]:
    """One round's times with ground truth's marginal cost: ground truth less the command
    kept, timed in the same round."""
    return {**round_, MARGINAL: round_[TRUTH] - round_[KEPT]}


def report(
    options: argparse.Namespace,
    runs: list[Raw],
    walls: list[dict[str, float]],
    cpus: list[dict[str, float]],
) -> None:
    """Print the table, write it and the JSON result under ``options.output``."""
    result: dict[str, Any] = {
        "benchmark": "truth",
        "repository": str(options.repo),
        "tasks": options.tasks,
        "raw_runs": len(runs),
        "against": str(options.against) if options.against else None,
        "wall_rounds_s": walls,
        "cpu_rounds_s": cpus,
    }
    tables, ratios = kind_tables({"wall": walls, "cpu": cpus}, BASELINE)
    against = []
    if options.against is not None:
        other = AGAINST.format(options.against)
        for kind, rounds in (("wall", walls), ("cpu", cpus)):
            if not rounds:
                continue
            paired = pair_ratios([{TRUTH: r[TRUTH], other: r[other]} for r in rounds], other)
            found = {"per_pair": paired[TRUTH], **spread(paired[TRUTH])}
            ratios[f"{kind}_over_against"] = found
            against.append(
                f"{kind}: ground truth over {other}, per pair "
                f"{' '.join(f'{r:.2f}' for r in paired[TRUTH])}; min / median / max "
                f"{found['min']:.2f} / {found['median']:.2f} / {found['max']:.2f}"
            )
    table = "\n".join(
        [
            f"Ground truth (`bugbout tasks`, whole process) over the raw confined pytest runs "
            f"of the same trees ({len(runs)} runs), {options.repo.name}, {len(walls)} pairs.",
            "",
            *tables,
            *against,
        ]
    ).rstrip()
    write_result(options.output, "truth", {**result, **ratios}, table)


if __name__ == "__main__":
    main()
