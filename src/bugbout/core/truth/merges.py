"""Fixes that are merges: the tree before such a fix is its first parent, the branch it
merges into. When that branch already passes the tests the merge brings, what they check
was there before the merge (the merged change reached it earlier, cherry-picked or merged,
or the tests check what it already did): the merge fixes nothing they detect."""

from __future__ import annotations

from bugbout.core.plumbing.git import Git
from bugbout.core.store.records import Task


def merge_note(git: Git, task: Task) -> str:
    """What a no-fail-to-pass reason adds when the fix is a merge whose tests its first
    parent passes already (empty when the fix has one parent)."""
    parents = git.run("rev-list", "--parents", "-n", "1", task.sha).split()[1:]
    if len(parents) < 2:
        return ""
    merged = ", ".join(parent[:12] for parent in parents[1:])
    return (
        f"; the fix is a merge (of {merged}): the branch it merges into (its first parent) "
        "passes the tests it brings already, so what they check was there before the merge"
    )
