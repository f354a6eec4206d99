"""Files written into a test run's tree: one file (or its removal) that never follows a
symlink a patch may have put there, and the fix's versions of its test files, which
ground truth, the base run, the audit's gate and scoring all install."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from bugbout.core.plumbing.trees.git import Git
from bugbout.core.plumbing.trees.patch import PatchError
from bugbout.core.plumbing.trees.testtree import TestTree
from bugbout.core.store.records import Task


def install_file(tree: Path | TestTree, path: str, data: bytes | None) -> None:
    """Write ``data`` at ``path`` in ``tree`` (``None`` deletes it), refusing a path that
    goes through a symlink: a patch applied to the tree could have put one there. A
    :class:`~bugbout.core.plumbing.trees.testtree.TestTree` gets it in its edits, the path
    exposed."""
    if isinstance(tree, TestTree):
        tree.expose([path])
        tree = tree.edits
    target = _inside(tree, path)
    if target.is_symlink() or (data is None and target.exists()):
        target.unlink()
    if data is None:
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def install_fix_tests(task: Task, git: Git, tree: Path | TestTree) -> None:
    """Put the fix's versions of the test files it changed into ``tree`` and remove the
    ones it deleted; a path through a symlink (a patch may have put one there) is never
    followed."""
    for path in task.deleted_test_files:
        install_file(tree, path, None)
    for path in task.changed_test_files:
        found = git.blob(task.sha, path)
        if found is not None:
            install_file(tree, path, found[1])


def _inside(tree: Path, path: str) -> Path:
    parts = PurePosixPath(path).parts
    if not parts or PurePosixPath(path).is_absolute() or any(p in ("", ".", "..") for p in parts):
        raise PatchError(f"refusing to write {path!r}: it is not a path inside the tree")
    for depth in range(1, len(parts)):
        if tree.joinpath(*parts[:depth]).is_symlink():
            prefix = "/".join(parts[:depth])
            raise PatchError(f"cannot install {path}: {prefix} is a symlink in the patched tree")
    return tree.joinpath(*parts)
