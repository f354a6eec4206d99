"""A package through the first-parent history: where it lived before (its directory
renamed, ``click/`` → ``src/click/``) and how many commits changed it, so ``init`` can
write every location mining must follow and pick the package the history works on.

One walk of the history, newest first, on the same log the miner reads: a commit that
moves most of a directory's Python files into a location of the package, each keeping
its path inside the directory, moved the package there; the directory it left is then
followed too, for the older commits. A module renamed to the package's ``__init__.py``
(``itsdangerous.py`` → ``src/itsdangerous/__init__.py``) was the package before: its
name without ``.py`` is followed, which mining reads as that module.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from bugbout.core.plumbing.project.testmodules import is_test_module
from bugbout.core.plumbing.trees.git import Change, Commit, Git

MOVED_SHARE = 0.5
"""The share of a directory's Python files a commit must move into the package for the
directory to be one of its past locations (a few modules moved in are not a move)."""


@dataclass
class PackageHistory:
    """One package: where it is now, where it was before, how much the history changed it."""

    path: str
    """Its directory today."""
    past: list[str] = field(default_factory=list)
    """Its earlier directories, most recent first."""
    commits: int = 0
    """First-parent commits that changed its Python source, under any of its directories."""

    @property
    def locations(self) -> list[str]:
        return [self.path, *self.past]


def trace_packages(git: Git, ref: str, packages: Sequence[str]) -> list[PackageHistory]:
    """Each of ``packages`` (directories at ``ref``) followed through the first-parent
    history of ``ref``: its past locations and the commits that changed it."""
    traced = [PackageHistory(path) for path in packages]
    for commit in git.first_parent_log(ref):
        for package in traced:
            _follow(git, commit, package)
    return traced


def choose(traced: Sequence[PackageHistory], preferred: str | None = None) -> list[PackageHistory]:
    """The packages the history changes most: every one changed by at least half as many
    commits as the most changed, most changed first (``preferred``, a name, first among
    equals; the first package when no commit changed any)."""
    if not traced:
        return []
    ranked = sorted(
        traced, key=lambda p: (-p.commits, PurePosixPath(p.path).name != preferred)
    )  # sorted() is stable: equals keep the order given
    top = ranked[0].commits
    if top == 0:
        return ranked[:1]
    return [package for package in ranked if 2 * package.commits >= top]


def _follow(git: Git, commit: Commit, package: PackageHistory) -> None:
    """Count ``commit`` when it changed the package, and add the directory it moved the
    package from, if it did."""
    prefixes = tuple(location + "/" for location in package.locations)
    modules = {location + ".py" for location in package.locations}
    changes = commit.changes
    paths = [path for change in changes for path in _paths(change)]
    if any(_is_source(path, prefixes) or path in modules for path in paths):
        package.commits += 1
    if not commit.parents:
        return
    for directory, moved in _moves(changes, prefixes).most_common():
        if directory in package.locations:
            continue
        if moved >= MOVED_SHARE * _python_files(git, commit.parents[0], directory):
            package.past.append(directory)


def _moves(changes: Iterable[Change], prefixes: tuple[str, ...]) -> Counter[str]:
    """The directories Python files were renamed from into the package (a file keeping its
    path inside the directory: ``click/core.py`` → ``src/click/core.py``), with how many,
    and a module renamed to its ``__init__.py``, by its name without ``.py``."""
    found: Counter[str] = Counter()
    for change in changes:
        old = change.old_path
        if old is None or not change.path.endswith(".py") or old.startswith(prefixes):
            continue
        prefix = next((p for p in prefixes if change.path.startswith(p)), None)
        if prefix is None:
            continue
        inner = change.path[len(prefix) :]
        if old.endswith("/" + inner) and len(old) > len(inner) + 1:
            found[old[: -len(inner) - 1]] += 1
        elif inner == "__init__.py" and old.endswith(".py") and not is_test_module(old):
            found[old.removesuffix(".py")] += 1
    return found


def _python_files(git: Git, rev: str, directory: str) -> int:
    """How many Python files ``directory`` holds at ``rev``."""
    listing = git.run("ls-tree", "-r", "-z", "--name-only", "--full-tree", rev, "--", directory)
    return sum(1 for name in listing.split("\0") if name.endswith(".py"))


def _paths(change: Change) -> tuple[str, ...]:
    return (change.path,) if change.old_path is None else (change.path, change.old_path)


def _is_source(path: str, prefixes: tuple[str, ...]) -> bool:
    return (
        path.startswith(prefixes)
        and path.endswith(".py")
        and PurePosixPath(path).name != "conftest.py"
        and not is_test_module(path)
    )
