"""An agent's ``run-tests`` on a Python 2 tree its build converts with ``2to3``: tested as
ground truth tests it, on a converted copy, never converting the agent's working tree.
Real pytest, real lib2to3, in the agents' sandbox."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.confinement.confine import readable_paths
from bugbout.core.plumbing.environments.environment import EnvironmentRequest
from bugbout.core.race.agent_setup import run_tests_script
from bugbout.plugins.environments.interpreter import InterpreterBuilder, InterpreterOptions
from bugbout.plugins.sandboxes.bubblewrap import Bubblewrap
from bugbout.sandbox.confinement import Confinement
from runners import pytest_runner
from test_py2_tree import BUGGY, SETUP, TEST

PROJECT = ProjectSettings(source="shout", tests="tests")


def _tree(root: Path, code: str) -> Path:
    tree = root / "work"
    (tree / "shout").mkdir(parents=True)
    (tree / "tests").mkdir()
    (tree / "setup.py").write_text(SETUP)
    (tree / "shout" / "__init__.py").write_text(code)
    (tree / "tests" / "test_shout.py").write_text(TEST)
    return tree


def _script(tree: Path, logs: Path) -> str:
    environment = InterpreterBuilder(InterpreterOptions(path=sys.executable)).build(
        EnvironmentRequest(project=PROJECT, tree=tree, home=tree.parent / "home")
    )
    return run_tests_script(pytest_runner(), PROJECT, environment, tree, logs)


def _snapshot(tree: Path) -> dict[str, str]:
    return {str(p.relative_to(tree)): p.read_text() for p in tree.rglob("*") if p.is_file()}


def _sandboxed(argv: list[str], tree: Path) -> subprocess.CompletedProcess[str]:
    """``argv`` run in ``tree``, started again (as bugbout starts again a run that never
    started) while bubblewrap fails to set up: another test's container mount that comes
    and goes under the machine's root can make its read-only remount of ``/`` fail."""
    for _ in range(3):
        done = subprocess.run(
            argv, cwd=tree, capture_output=True, text=True, timeout=300, check=False
        )
        if not (done.returncode == 1 and done.stderr.startswith("bwrap: ")):
            break
    return done


def test_a_python2_tree_is_tested_converted_and_left_as_it_was(
    tmp_path: Path, bwrap: Bubblewrap
) -> None:
    """In the sandbox an agent runs in: the working tree and its logs writable."""
    tree, logs = _tree(tmp_path, BUGGY), tmp_path / "logs"
    script = _script(tree, logs)
    before = _snapshot(tree)
    confinement = Confinement(
        workdir=tree, writable=(logs,), readable=readable_paths([sys.executable])
    )
    done = _sandboxed(bwrap.wrap([script, "-v", "tests"], confinement), tree)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output  # the bug: test_shouts fails, on Python 3
    assert "tests/test_shout.py::test_shouts FAILED" in output
    assert "tests/test_shout.py::test_refuses_numbers PASSED" in output
    assert "SyntaxError" not in output
    assert _snapshot(tree) == before  # never converted in place
    assert not (logs / "2to3" / tree.name).exists()  # the copy is removed


def test_the_fixed_tree_passes_and_the_agent_s_edits_are_what_is_tested(
    tmp_path: Path,
) -> None:
    tree, logs = _tree(tmp_path, BUGGY), tmp_path / "logs"
    script = _script(tree, logs)
    (tree / "shout" / "__init__.py").write_text(BUGGY.replace(".lower()", ".upper()"))
    done = subprocess.run([script, "tests"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
    assert 'print "cannot shout", e' in (tree / "shout" / "__init__.py").read_text()


def test_a_python3_tree_runs_in_place(tmp_path: Path) -> None:
    tree, logs = _tree(tmp_path, "def shout(text):\n    return text.upper()\n"), tmp_path / "logs"
    (tree / "setup.py").write_text("from setuptools import setup\nsetup(name='shout')\n")
    script = Path(_script(tree, logs)).read_text()
    assert "2to3" not in script
    assert f"cd {tree}\nexec " in script
