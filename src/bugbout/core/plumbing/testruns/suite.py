"""Where a task's suite is: the repository's tests as they were at the task's commit.

``project.tests`` names one place, but projects move their tests over their history
(``testing/`` became ``tests/``, a root-level ``test_x.py`` became a folder, the tests
lived in the package). Every run of "the repository's suite" for a task, and the prompt
that tells an agent where the tests are, take :func:`suite_paths` of the task's unfixed
tree: ``project.tests`` when that tree has it, and the test folder of each of the task's
own test modules that it does not hold; never a path the tree lacks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

TEST_FOLDERS = frozenset({"test", "tests", "testing"})
"""Folder names that hold a suite: a test module's outermost such parent is its suite."""


def suite_paths(tree: Path, tests: str, test_files: Iterable[str]) -> tuple[str, ...]:
    """The suite's paths for pytest in ``tree`` (a checkout of the task's parent):
    ``tests`` when the tree has that folder, then :func:`suite_of` of each of
    ``test_files`` outside the paths found so far, when the tree has it."""
    found = [tests] if (tree / tests).is_dir() else []
    for module in test_files:
        folder = suite_of(module)
        if not any(_inside(folder, path) for path in found) and (tree / folder).exists():
            found = [path for path in found if not _inside(path, folder)] + [folder]
    return tuple(found)


def suite_of(module: str) -> str:
    """The suite a test module belongs to: its outermost parent folder named like a
    tests folder (:data:`TEST_FOLDERS`), else its own folder; a module at the root of the
    repository is its own suite."""
    path = PurePosixPath(module)
    parents = list(reversed(path.parents))[1:]  # outermost first, without the root
    for parent in parents:
        if parent.name in TEST_FOLDERS:
            return str(parent)
    return str(path.parent) if parents else module


def writing_folder(suite: Sequence[str], tests: str) -> str:
    """Where an agent is told to write its tests: the suite's first folder (the root
    when that is a module at the root), else ``tests``."""
    if not suite:
        return tests
    first = suite[0]
    return str(PurePosixPath(first).parent) if first.endswith(".py") else first


def _inside(path: str, folder: str) -> bool:
    outer, pure = PurePosixPath(folder), PurePosixPath(path)
    return str(outer) == "." or pure == outer or outer in pure.parents
