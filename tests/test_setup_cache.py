"""What a ``setup.py`` declared when it ran is kept by what it read: the next tree whose
``setup.py`` reads the same gets it without a run, and a change to anything it read (a
file of the tree, a folder it listed, a file outside the tree) runs it again. Real runs:
confined by bubblewrap, or, to read a file outside the tree (a confined run sees none of
``/tmp`` or ``HOME``), plainly."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings, ProjectSettings
from bugbout.core.plumbing.confinement import confine as confinement
from bugbout.core.plumbing.confinement.confine import Confine
from bugbout.core.store.records import AddedDependency
from bugbout.core.truth.oracle import computed_test_dependencies

READING = """\
import os
from setuptools import setup

with open("deps.list") as handle:
    TESTS = [line.strip() for line in handle if line.strip()]
PLUGINS = sorted(name[:-3] for name in os.listdir("plugins") if name.endswith(".py"))
with open({outside!r}) as handle:
    TESTS.append(handle.read().strip())

setup(name="calc", extras_require={{"tests": TESTS + PLUGINS}})
"""


@pytest.fixture
def confine(plugins: Plugins, tmp_path: Path) -> Confine:
    settings = BoutSettings(project=ProjectSettings(source="calc"), root=tmp_path / "repo")
    sandbox = plugins.create("sandbox", "bubblewrap")
    return confinement.test_confinement(
        settings.limits.tests,
        sandbox,
        tmp_path / "bugbout-home",
        confinement.masked_paths(
            settings.repository, settings.store_dir, tmp_path / "bugbout-home"
        ),
    )


class Counted:
    """A confinement that counts the ``setup.py`` runs it wraps."""

    def __init__(self, confine: Confine) -> None:
        self.confine = confine
        self.runs = 0

    def __call__(self, argv: list[str], tree: Path, writable: tuple[Path, ...]) -> list[str]:
        self.runs += 1
        return self.confine(argv, tree, writable)


def _tree(root: Path, outside: Path, *, script: str = READING) -> Path:
    root.mkdir(parents=True)
    (root / "setup.py").write_text(script.format(outside=str(outside)))
    (root / "deps.list").write_text("pytest\nmock\n")
    (root / "plugins").mkdir()
    (root / "plugins" / "pytest_one.py").write_text("")
    (root / "README.rst").write_text("not read\n")
    return root


def _names(added: list[AddedDependency]) -> list[str]:
    return sorted(dependency.requirement for dependency in added)


def _plainly(argv: list[str], tree: Path, writable: tuple[Path, ...]) -> list[str]:
    return argv


def test_a_setup_py_that_reads_the_same_runs_once_and_again_when_what_it_read_changes(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("hypothesis\n")
    counted, cache = Counted(_plainly), tmp_path / "home" / "setup-py"
    first = _tree(tmp_path / "first", outside)

    found = computed_test_dependencies(first, counted, cache=cache)
    assert _names(found) == ["hypothesis", "mock", "pytest", "pytest_one"]
    assert counted.runs == 1

    second = _tree(tmp_path / "second", outside)  # another task's tree, the same inputs
    (second / "README.rst").write_text("changed, never read\n")
    assert _names(computed_test_dependencies(second, counted, cache=cache)) == _names(found)
    assert counted.runs == 1  # kept: not run again

    (second / "deps.list").write_text("pytest\nnose\n")  # a file it read
    assert "nose" in _names(computed_test_dependencies(second, counted, cache=cache))
    assert counted.runs == 2

    (second / "plugins" / "pytest_two.py").write_text("")  # a folder it listed
    assert "pytest_two" in _names(computed_test_dependencies(second, counted, cache=cache))
    assert counted.runs == 3

    outside.write_text("coverage>=4\n")  # a file outside the tree
    assert "coverage>=4" in _names(computed_test_dependencies(second, counted, cache=cache))
    assert counted.runs == 4

    # each earlier state is still kept: the first tree's inputs are those of its entry
    outside.write_text("hypothesis\n")
    os.utime(outside, ns=(0, 0))  # its time changed too: keyed by size and time, run again
    assert _names(computed_test_dependencies(first, counted, cache=cache)) == _names(found)
    assert counted.runs == 5
    assert _names(computed_test_dependencies(first, counted, cache=cache)) == _names(found)
    assert counted.runs == 5


def test_a_setup_py_that_starts_a_process_is_never_kept(tmp_path: Path, confine: Confine) -> None:
    spawning = textwrap.dedent(
        """\
        import subprocess, sys
        from setuptools import setup

        subprocess.run([sys.executable, "-c", "pass"], check=True)
        setup(name="calc", tests_require=["mo" + "ck"])
        """
    )
    counted, cache = Counted(confine), tmp_path / "home" / "setup-py"
    tree = _tree(tmp_path / "tree", tmp_path / "unused", script=spawning)
    for expected in (1, 2):
        assert _names(computed_test_dependencies(tree, counted, cache=cache)) == ["mock"]
        assert counted.runs == expected


def test_a_run_that_saw_the_tree_elsewhere_is_never_kept(tmp_path: Path) -> None:
    """As a container shows it: its paths are not this machine's."""
    elsewhere = tmp_path / "elsewhere"

    def moved(argv: list[str], tree: Path, writable: tuple[Path, ...]) -> list[str]:
        script = f'rm -rf "{elsewhere}" && cp -r . "{elsewhere}" && cd "{elsewhere}" && exec "$@"'
        return ["bash", "-c", script, "bash", *argv]

    outside = tmp_path / "outside.txt"
    outside.write_text("hypothesis\n")
    counted, cache = Counted(moved), tmp_path / "home" / "setup-py"
    tree = _tree(tmp_path / "tree", outside)
    for expected in (1, 2):
        assert "hypothesis" in _names(computed_test_dependencies(tree, counted, cache=cache))
        assert counted.runs == expected
