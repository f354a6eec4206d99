"""The floor a benchmark compares bugbout's test runs with: ``python -m pytest`` started
directly on a prepared tree, with what bugbout's own runs must have and nothing more.

A raw run takes the options the environment's pytest needs for the project
(:mod:`bugbout.core.plumbing.environments.pytest_era`: the project's ``addopts`` ignored, as bugbout
ignores them, the plugins bugbout turns off turned off), ``-q``, and the variables
bugbout's runs have (a private ``HOME``, ``PYTHONDONTWRITEBYTECODE``: no bytecode kept
between runs). It runs in a session of its own, confined as bugbout confines its runs
when a confinement is given: by the sandbox alone, or also held by the guard to the
confinement's limits (``limits.tests``: memory, processes, disk, files), as every one of
bugbout's test runs is. A raw run that ran no test stops the benchmark: its time
would be no floor.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.confinement.confine import Confine
from bugbout.core.plumbing.confinement.limits import run_guard
from bugbout.core.plumbing.environments.environment import Environment
from bugbout.core.plumbing.environments.pytest_era import pytest_era

RAN = (0, 1, 2)
"""pytest's exit statuses once it ran tests: all passed, some failed, a module did not
collect (the others ran)."""


@dataclass(frozen=True)
class Raw:
    """One raw pytest run, ready to start."""

    argv: list[str]
    tree: Path
    env: dict[str, str]
    fds: tuple[int, ...] = ()
    """The descriptors it must inherit (the guard's lifeline)."""


def raw_run(
    environment: Environment,
    tree: Path,
    targets: list[str],
    *,
    project: ProjectSettings,
    home: Path,
    confine: Confine | None,
    held: bool = False,
) -> Raw:
    """``targets`` run by the environment's pytest in ``tree`` (``home`` its private
    HOME and TMPDIR, which must exist), wrapped by ``confine`` when given; ``held``: also
    held by the guard to ``confine``'s limits (``limits.tests``), as bugbout's runs are,
    watching ``tree`` and ``home``."""
    era = pytest_era(environment)
    args = [
        "-p", "no:cacheprovider", *era.options(tree), "-q", *project.pytest_args,
        "--", *targets,
    ]  # fmt: skip
    command = environment.command(args, tree, [])
    argv = confine(command.argv, tree, (home,)) if confine else command.argv
    fds: tuple[int, ...] = ()
    if held:
        report = home.with_name(f"{home.name}-limits.json")
        guard = run_guard(confine, (tree, home), report) if confine is not None else None
        if guard is None:
            sys.exit("a held raw run needs a confinement with limits (test_confinement's)")
        argv, fds = guard.wrap(argv), guard.fds
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": str(home),
        "TMPDIR": str(home),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        **project.env,
        **command.env,
        **era.variables(),
    }
    return Raw(argv, tree, env, fds)


def run_raw(runs: list[Raw]) -> None:
    """Each run in turn, in a session of its own; one that ran no test stops the
    benchmark with what pytest said."""
    for run in runs:
        done = subprocess.run(
            run.argv,
            cwd=run.tree,
            env=run.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            check=False,
            start_new_session=True,
            pass_fds=run.fds,
        )
        if done.returncode not in RAN:
            tail = done.stdout.decode(errors="replace").strip().splitlines()[-3:]
            sys.exit(
                f"a raw run in {run.tree} ran no test (exit status {done.returncode}: "
                f"{' | '.join(tail)}): fix the repository's options, then run this again"
            )
