"""Fixes that are merges: the tree before such a fix is its first parent, the branch it
merges into. When that branch already passes the tests the merge brings, git tells
which of two things happened: the merged change reached it earlier (cherry-picked or
merged, so the merge brings only part of what its branch changed in the code), or the
merge brings its branch's whole change and the tests pass without it."""

from __future__ import annotations

from collections import Counter

from bugbout.core.plumbing.trees.git import Git, GitError, diff_lines
from bugbout.core.store.records import Task


def merge_note(git: Git, task: Task) -> str:
    """What a no-fail-to-pass reason adds when the fix is a merge whose tests its first
    parent passes already (empty when the fix has one parent)."""
    parents = git.run("rev-list", "--parents", "-n", "1", task.sha).split()[1:]
    if len(parents) < 2:
        return ""
    first, merged = parents[0], parents[1]
    names = ", ".join(parent[:12] for parent in parents[1:])
    if _brings_whole_branch(git, task, first, merged):
        return (
            f"; the fix is a merge (of {names}) that brings its branch's whole change to the "
            "code, none of which its first parent had before: its tests pass without that "
            "change, not because it was merged earlier"
        )
    return (
        f"; the fix is a merge (of {names}): the branch it merges into (its first parent) "
        "passes the tests it brings already, so what they check was there before the merge"
    )


def _brings_whole_branch(git: Git, task: Task, first: str, merged: str) -> bool:
    """Whether the merge changes the code, against its first parent, by the same lines as
    its branch did since the two lines parted (their merge base). The code is what lies
    where the fix's source files do: their top folders (a module at the root: itself)."""
    try:
        base = git.run("merge-base", first, merged).strip()
    except GitError:  # unrelated histories: no branch change to compare with
        return False
    if not base:
        return False
    code = sorted({path.split("/", 1)[0] for path in task.source_files})
    return _changed_lines(git, first, task.sha, code) == _changed_lines(git, base, merged, code)


def _changed_lines(git: Git, old: str, new: str, paths: list[str]) -> Counter[str]:
    """The lines added and removed (each with its ``+`` or ``-``) from ``old`` to ``new``
    under ``paths``, wherever they sit in their files."""
    out = git.run(
        "diff", "--no-ext-diff", "--no-color", "--no-renames", "-U0", old, new, "--",
        *(f":(literal){path}" for path in paths),
    )  # fmt: skip
    return Counter(diff_lines(out))
