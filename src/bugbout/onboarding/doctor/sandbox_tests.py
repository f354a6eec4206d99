"""A real pytest run in the chosen sandbox, as a bout makes one: a test tree of a commit
(an overlay where the machine mounts them), confined as the bout confines its test runs,
its outcome read from bugbout's pytest plugin. doctor approves a sandbox only when this
run passes its one test: a sandbox that starts ``/bin/sh`` may still fail every test run
(podman inside bugbout's overlay namespace did, with exit 125 before pytest started)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bugbout.core.contract.errors import BugboutError
from bugbout.core.contract.settings import BoutSettings, ProjectSettings
from bugbout.core.plumbing.environments.environment import Command
from bugbout.sandbox.confinement import Sandbox

TIMEOUT = 120.0
"""Seconds the test run may take (a podman container starts in under one)."""
TEST = "tests/test_doctor.py::test_doctor"
PASSED = "pytest passed a test in it, confined as a bout's test runs are"
PROJECT = ProjectSettings(source="src/probe", tests="tests")


@dataclass(frozen=True)
class HostPython:
    """A test environment of one interpreter of this machine that has pytest."""

    python: str

    @property
    def description(self) -> str:
        return f"host: {self.python}"

    @property
    def key(self) -> str:
        return self.python

    def command(self, args: list[str], tree: Path, extra_paths: list[Path]) -> Command:
        path = os.pathsep.join([*(str(p) for p in extra_paths), str(tree)])
        return Command(
            argv=[self.python, "-m", "pytest", *args], env={"PYTHONPATH": path}, cwd=tree
        )


def pytest_problem(settings: BoutSettings, sandbox: Sandbox) -> str | None:
    """``None`` when pytest passed one test in ``sandbox``, confined as the bout's test
    runs are; else what failed, in one line."""
    python = python_with_pytest()
    if python is None:
        return (
            "no Python here has pytest to try a test run with: install it where bugbout "
            "runs (pip install pytest)"
        )
    from bugbout.core.plumbing.confinement.confine import masked_paths, test_confinement
    from bugbout.core.plumbing.runtime.home import bugbout_home
    from bugbout.core.plumbing.testruns.testrun import run_tests
    from bugbout.core.plumbing.trees.checkout import Checkouts, remove_tree
    from bugbout.core.plumbing.trees.git import Git
    from bugbout.core.plumbing.trees.testtree import fresh_test_tree
    from bugbout.core.store.records import Outcome, RunStatus
    from bugbout.testing.repository import RepositoryBuilder

    scratch = Path(tempfile.mkdtemp(prefix="bugbout-doctor-tests-"))
    try:
        repo = RepositoryBuilder(scratch / "repo")
        rev = repo.commit("Probe", {"tests/test_doctor.py": "def test_doctor():\n    pass\n"})
        home = bugbout_home()
        masked = masked_paths(settings.repository, settings.store_dir, home)
        confine = test_confinement(settings.limits.tests, sandbox, home, masked)
        with Git(repo.path) as git:
            checkouts = Checkouts(git, scratch / "checkouts", settings.run.checkouts)
            tree = fresh_test_tree(checkouts, rev, scratch / "tree")
            run = run_tests(
                HostPython(python), tree, ["tests/test_doctor.py"], project=PROJECT,
                label="doctor", timeout=TIMEOUT, confine=confine,
            )  # fmt: skip
    except BugboutError as exc:  # a run that never started says why
        return str(exc)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"the test run could not be set up: {exc}"
    finally:
        remove_tree(scratch)
    if run.status == RunStatus.OK and run.outcomes == {TEST: Outcome.PASSED}:
        return None
    output = next((line.strip() for line in run.detail.splitlines() if line.strip()), "")
    why = [f"exit status {run.exit_code}", *run.tampering[:1], *([output] if output else [])]
    return f"pytest did not pass a test in it ({run.status}: {'; '.join(w[:300] for w in why)})"


def python_with_pytest() -> str | None:
    """bugbout's own Python if it has pytest, else ``python3`` on ``PATH`` if that does."""
    for candidate in (sys.executable, shutil.which("python3")):
        if candidate and _has_pytest(candidate):
            return candidate
    return None


def _has_pytest(python: str) -> bool:
    try:
        found = subprocess.run(
            [python, "-c", "import pytest"], capture_output=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return found.returncode == 0
