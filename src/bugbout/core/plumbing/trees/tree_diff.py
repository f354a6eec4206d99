"""The files two commits hold differently, read from their trees through ``cat-file``: a
folder the two share (the same tree id) is never opened."""

from __future__ import annotations

from dataclasses import dataclass

from bugbout.core.plumbing.trees.git import Git, GitError, TreeEntry


@dataclass(frozen=True)
class Differing:
    """A path (bytes, ``/``-separated) whose file differs: its entry in each commit
    (``None`` where it is not a file; a symlink or a submodule is an entry too)."""

    path: bytes
    old: TreeEntry | None
    new: TreeEntry | None


def differing(git: Git, old: str, new: str) -> list[Differing]:
    """Every file path whose entry (mode or content) differs between ``old`` and ``new``,
    one folder level at a time, each level's trees in one batch."""
    roots = git.tree(old), git.tree(new)
    if roots[0] is None or roots[1] is None:
        raise GitError(f"cannot compare {old} and {new}: one names no commit")
    found: list[Differing] = []
    level: list[tuple[bytes, str | None, str | None]] = [(b"", *roots)]
    while level:
        trees = git.trees(tree for _, *pair in level for tree in pair if tree is not None)
        below: list[tuple[bytes, str | None, str | None]] = []
        for prefix, left, right in level:
            mine = {entry.name: entry for entry in trees.get(left or "", ())}
            theirs = {entry.name: entry for entry in trees.get(right or "", ())}
            for name in sorted(mine.keys() | theirs.keys()):
                before, after = mine.get(name), theirs.get(name)
                if before == after:
                    continue
                folders = _tree(before), _tree(after)
                if folders != (None, None):
                    below.append((prefix + name + b"/", *folders))
                files = _file(before), _file(after)
                if files[0] != files[1]:
                    found.append(Differing(prefix + name, *files))
        level = below
    return found


def _tree(entry: TreeEntry | None) -> str | None:
    return entry.object_id if entry is not None and entry.is_tree else None


def _file(entry: TreeEntry | None) -> TreeEntry | None:
    return entry if entry is not None and not entry.is_tree else None
