"""One export turned from one commit's tree into another's in place, and back: only the
files the two commits hold differently are written (by git, as an export writes them) or
removed (with the folders that leaves empty: an export has none).

Ground truth runs a task's tests on the tree before its fix and on the tree after it
(:mod:`bugbout.core.truth.oracle`): writing the whole project twice cost more than
everything else bugbout does for a task but its test runs. Turned in place, the
after tree becomes the before tree and, once the before runs are over, the after tree
again, but only when those runs left it as they found it (:func:`snapshot`: every
folder's entries, every file's inode, change time and mode); else the caller exports it
afresh. A turn that could not be exact is not made (:func:`exact`).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from bugbout.core.plumbing.trees.built_files import CONFIGURATION, declared_version_modules
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.plumbing.trees.tree_diff import Differing
from bugbout.sandbox.identity import hand_over

Snapshot = dict[str, tuple[int, ...]]
_LINKS = (b"120000", b"160000")
"""A symbolic link's mode and a submodule's: a turn never goes through either."""


def exact(changes: list[Differing], tree: Path) -> bool:
    """Whether turning ``tree`` (an export) by ``changes`` gives what an export of the
    other commit would: no symlink or submodule changes, no ``.gitattributes`` (how git
    writes the files it does not rewrite), nor a file the export's version modules depend
    on (:mod:`~bugbout.core.plumbing.trees.built_files`: a tree that declares any is
    exported whole)."""
    for change in changes:
        modes = [entry.mode for entry in (change.old, change.new) if entry is not None]
        path = os.fsdecode(change.path)
        if any(mode in _LINKS for mode in modes) or path in CONFIGURATION:
            return False
        if path.rsplit("/", 1)[-1] == ".gitattributes":
            return False
    return not declared_version_modules(tree)


def turn(git: Git, tree: Path, rev: str, changes: list[Differing], *, old: bool) -> None:
    """Make ``tree`` hold ``rev``'s version of every path of ``changes`` (its ``old``
    side's, else its ``new`` side's): the paths ``rev`` lacks removed first, then the
    others written by git."""
    present = [change.path for change in changes if (change.old if old else change.new)]
    for change in changes:
        if (change.old if old else change.new) is None:
            _remove(tree, change.path)
    if present:
        git.export(rev, tree, present)


def snapshot(tree: Path) -> Snapshot:
    """What a test run could change in ``tree``: each folder's mode and owner (``tree``'s
    own too), each other entry's mode, inode and change time (which a write, a rename or
    ``utime`` moves), by path. ``tree`` is handed to the confined user first
    (:func:`hand_over`), so that the runs' own hand-over changes nothing."""
    hand_over(tree)
    top = os.lstat(tree)
    seen: Snapshot = {str(tree): (top.st_mode, top.st_uid, top.st_gid)}
    folders = [str(tree)]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                info = entry.stat(follow_symlinks=False)
                if entry.is_dir(follow_symlinks=False):
                    seen[entry.path] = (info.st_mode, info.st_uid, info.st_gid)
                    folders.append(entry.path)
                else:
                    seen[entry.path] = (info.st_mode, info.st_ino, info.st_ctime_ns)
    return seen


def _remove(tree: Path, path: bytes) -> None:
    """Delete ``path`` from ``tree`` if it is there (never through a symlink), then each
    folder above it that this left empty."""
    parts = os.fsdecode(path).split("/")
    for depth in range(1, len(parts)):
        if tree.joinpath(*parts[:depth]).is_symlink():
            return  # not in the tree: what lies behind a symlink is not the tree's
    target = tree.joinpath(*parts)
    if target.is_dir() and not target.is_symlink():
        return  # a folder of the other commit: its files are changes of their own
    target.unlink(missing_ok=True)
    for depth in range(len(parts) - 1, 0, -1):
        with contextlib.suppress(OSError):  # not empty: nor is any above it
            tree.joinpath(*parts[:depth]).rmdir()
            continue
        break
