#!/usr/bin/env python
"""Injected bugs: what validating N mutants of click at HEAD costs, against one suite run.

Clones click (``--repo``, from the mirror when missing) and, with the ``interpreter``
environment and the chosen sandbox, times one plain run of click's suite as bugbout runs
tests (the baseline), then the ``mutants`` miner's work on HEAD with ``miner.limit=N``:
the suite under the coverage plugin once, then each mutation tried against the tests
that ran its file. It reports each phase as a ratio to the baseline, the mutations tried
and kept, and why the others were left out. A report, not a test: it exits 0.

With ``--tests test_basic.py,test_options.py`` the clone gets a commit of its own that
keeps only those modules of click's suite (and ``conftest.py``), and that commit is both
measures' HEAD: on a loaded machine the whole suite under bugbout's outcome plugin takes
minutes a run, and the ratios are to a run of the suite measured.

    python benchmarks/bench_mutants.py [--limit N] [--sandbox S] [--repo PATH] [--tests M,...]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import (
    BoutSettings,
    PluginChoice,
    ProjectSettings,
    TasksSettings,
)
from bugbout.core.mine.injection import SuiteRunner, mine_mutants
from bugbout.core.mine.mining import MiningRequest
from bugbout.core.mine.mutation import MutantOptions
from bugbout.core.pipeline import suite_runner
from bugbout.core.plumbing.trees.git import Git

CACHE = Path(__file__).parent / ".cache"
OUTPUT = Path(__file__).parent.parent / ".bench"
MIRROR = Path("/work/.mirror/pallets+click/repo")
PROJECT = ProjectSettings(source="src/click", tests="tests")


class Phases:
    """A progress that records how long each phase took and what each kept mutant cost."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.kept_at: list[float] = []
        self._phase, self._started = "", 0.0

    def start(self, description: str, total: int | None = None) -> None:
        self._phase, self._started = description, time.monotonic()
        print(f"{description} ...", flush=True)

    def advance(self, detail: str = "") -> None:
        self.kept_at.append(time.monotonic() - self._started)
        print(f"  kept {len(self.kept_at)} at {self.kept_at[-1]:.0f} s: {detail}", flush=True)

    def finish(self) -> None:
        self.seconds[self._phase] = time.monotonic() - self._started

    def warn(self, message: str) -> None:
        print(f"warning: {message}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--limit", type=int, default=20, help="mutants to keep")
    parser.add_argument("--sandbox", default="bubblewrap")
    parser.add_argument("--repo", type=Path, default=CACHE / "click")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tests", default="", help="the suite's modules kept, comma-separated")
    options = parser.parse_args()
    if not options.repo.exists():
        subprocess.run(["git", "clone", "-q", str(MIRROR), str(options.repo)], check=True)
    if options.tests:
        _keep_tests(options.repo, options.tests.split(","))
    plugins = make_plugins(entry_points=False)
    if plugins.create("sandbox", options.sandbox).problem():
        options.sandbox = "none"
    settings = BoutSettings(
        project=PROJECT,
        environment=PluginChoice(name="interpreter"),
        sandbox=PluginChoice(name=options.sandbox),
        tasks=TasksSettings(timeout=7200),
        root=options.repo,
    )
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE, prefix="mutants-home-") as home:
        os.environ["BUGBOUT_HOME"] = home
        runner = suite_runner(settings, plugins)
        baseline, tests = _suite_run(runner, options.repo, Path(home))
        phases = Phases()
        request = MiningRequest(repository=options.repo, project=PROJECT)
        mined = mine_mutants(
            request, MutantOptions(limit=options.limit, seed=options.seed), runner, phases
        )
    coverage = phases.seconds["running the suite under coverage"]
    validation = phases.seconds["validating mutants"]
    kept = len(mined.tasks)
    result: dict[str, Any] = {
        "benchmark": "mutants",
        "repository": str(options.repo),
        "sandbox": options.sandbox,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "suite_tests": tests,
        "suite_modules": options.tests or "all",
        "limit": options.limit,
        "tried": mined.examined - mined.excluded.get("over-limit", 0),
        "kept": kept,
        "excluded": mined.excluded,
        "baseline_s": baseline,
        "coverage_over_baseline": coverage / baseline,
        "validation_over_baseline": validation / baseline,
        "per_kept_over_baseline": validation / baseline / max(kept, 1),
    }
    OUTPUT.mkdir(exist_ok=True)
    (OUTPUT / "mutants.json").write_text(json.dumps(result, indent=2) + "\n")
    report(result)
    sys.exit(0)


def _keep_tests(repo: Path, kept: list[str]) -> None:
    """Commit, in the clone, a tree whose suite is only ``kept`` (and ``conftest.py``)."""
    tests = repo / PROJECT.tests
    for module in tests.rglob("test_*.py"):
        if module.name not in kept:
            module.unlink()
    for folder in sorted(tests.rglob("*"), reverse=True):
        if folder.is_dir() and not any(folder.rglob("*.py")):
            shutil.rmtree(folder)
    for args in (["add", "-A", PROJECT.tests], ["commit", "-qm", "bench: a part of the suite"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True)


def _suite_run(runner: SuiteRunner, repo: Path, home: Path) -> tuple[float, int]:
    """The seconds of one plain run of the suite at HEAD, and its tests."""
    tree = home / "baseline"
    with Git(repo) as git:
        git.export("HEAD", tree)
        date = git.run("log", "-1", "--format=%cI", "HEAD").strip()
    environment = runner.environment(tree, date)
    started = time.monotonic()
    timeout = MutantOptions().test_timeout
    run = runner.run(environment, tree, [PROJECT.tests], label="baseline", test_timeout=timeout)
    seconds = time.monotonic() - started
    print(f"one suite run: {seconds:.0f} s, {run.status.value}", flush=True)
    return seconds, len(run.outcomes)


def report(result: dict[str, Any]) -> None:
    lines = [
        f"click at HEAD ({result['suite_modules']}): {result['suite_tests']} tests, one run "
        f"{result['baseline_s']:.1f} s (sandbox {result['sandbox']})",
        "",
        "| measure | / one suite run |",
        "|---|---|",
        f"| the suite under coverage, once | {result['coverage_over_baseline']:.2f} |",
        f"| validating until {result['limit']} kept | {result['validation_over_baseline']:.2f} |",
        f"| per kept mutant | {result['per_kept_over_baseline']:.2f} |",
        "",
        f"tried {result['tried']}, kept {result['kept']}; left out: {result['excluded']}",
    ]
    text = "\n".join(lines)
    (OUTPUT / "mutants.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
