"""The walk of a history: its first-parent line, where a merge of a line merged before
(a maintenance branch such as ``2.x-line`` or ``8.1.x``, merged forward again and again)
gives way to the commits it brings on that line.

Such a merge is no change of the line it merges into: its diff against its first parent
holds fixes made, and tested, on the maintenance line, which the line merged into had
already received (ported by hand) or never needed (its code had moved on). Each fix is
examined on its own line instead, against its own parent; one whose patch the line merged
into already holds (``git cherry``) is the same change as a commit found there.
Decided from git alone, before any test runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice

from bugbout.core.plumbing.trees.git import Commit, Git

FORWARD_MERGE = "forward-merge"
"""Why a merge of a line merged before is left out: its commits are examined instead."""
CHERRY_PICKED = "cherry-picked"
"""Why a commit a forward merge brings is left out: its patch is on the line merged into."""
MERGED_BACK = "merged-back"
"""Why a merge a forward merge brings is left out: it merged into the maintenance line
what the main line had already (``Merge branch 'main' into 1.x``)."""


def first_parent_walk(
    git: Git, ref: str, *, since: int | None = None
) -> Iterator[tuple[Commit, str]]:
    """The commits of ``ref``'s first-parent line, newest first, each with why it is left
    out before any rule (:data:`FORWARD_MERGE`, :data:`CHERRY_PICKED`, :data:`MERGED_BACK`)
    or ``""``. A forward merge is followed by the commits of the merged line's
    first-parent chain that it brings, newest first, walked the same way: each commit is
    examined once. ``since`` (a Unix time) stops every walk."""
    parents: dict[str, list[str]] = {}
    for row in git.run("rev-list", "--parents", ref).splitlines():
        sha, *found = row.split()
        parents[sha] = found
    return _walk(git, parents, ref, since=since, count=None, scopes=())


_Scope = tuple["_Line", int]
"""A line and the position on it of a forward merge being followed: what it brings."""


def _walk(
    git: Git,
    parents: dict[str, list[str]],
    tip: str,
    *,
    since: int | None,
    count: int | None,
    scopes: tuple[_Scope, ...],
) -> Iterator[tuple[Commit, str]]:
    """The first ``count`` commits (all: ``None``) of ``tip``'s first-parent line, each
    forward merge followed by what it brings (``parents``: the graph, by commit), of
    those each forward merge of ``scopes`` (the walks this one is inside) brings."""
    line: _Line | None = None  # read at the first merge
    for commit in islice(git.first_parent_log(tip, since=since), count):
        if len(commit.parents) != 2:
            yield commit, ""
            continue
        first, merged = commit.parents
        if not _brings(scopes, merged):
            yield commit, MERGED_BACK
            continue
        line = line or _Line(parents, tip)
        brought = line.brought(commit.sha, scopes)
        if brought is None:
            yield commit, ""
            continue
        yield commit, FORWARD_MERGE
        picked = {
            row[2:].strip()
            for row in git.run("cherry", first, merged).splitlines()
            if row.startswith("-")
        }
        inner = (*scopes, (line, line.position[commit.sha]))
        walked = _walk(git, parents, merged, since=since, count=brought, scopes=inner)
        for found, reason in walked:
            yield found, reason or (CHERRY_PICKED if found.sha in picked else "")


def _brings(scopes: tuple[_Scope, ...], sha: str) -> bool:
    """Whether each forward merge of ``scopes`` brings ``sha`` to its line."""
    return all(line.entry.get(sha) == position for line, position in scopes)


class _Line:
    """A first-parent line of the graph ``parents`` and, for each commit it reaches, the
    position (oldest first) of the first commit of the line that reaches it."""

    def __init__(self, parents: dict[str, list[str]], tip: str) -> None:
        self.parents = parents
        chain = []
        sha: str | None = tip
        while sha is not None:
            chain.append(sha)
            sha = next(iter(parents.get(sha, ())), None)
        self.position = {sha: index for index, sha in enumerate(reversed(chain))}
        self.entry: dict[str, int] = {}
        for index, sha in enumerate(reversed(chain)):
            stack = [sha]
            while stack:
                reached = stack.pop()
                if reached not in self.entry:
                    self.entry[reached] = index
                    stack.extend(parents.get(reached, ()))

    def brought(self, merge: str, scopes: tuple[_Scope, ...]) -> int | None:
        """How many commits of its second parent's first-parent chain ``merge`` brings
        (of those the forward merges of ``scopes`` bring), when that line was merged
        before: the first commit of the chain its first parent already has is off this
        line (reached through an earlier merge). ``None`` for a branch started from this
        line, however often it took the line's news, or one of an unrelated history."""
        index = self.position[merge]
        sha: str | None = self.parents[merge][1]
        count, kept = 0, None
        while sha is not None and self.entry.get(sha) == index:
            if kept is None and not _brings(scopes, sha):
                kept = count  # a line walked has this one already, and what follows
            count += 1
            sha = next(iter(self.parents.get(sha, ())), None)
        if sha is None or sha in self.position:
            return None
        return count if kept is None else kept
