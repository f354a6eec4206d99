"""Fixes that move code: a function or class the fix adds to one of its source modules,
taken out of another it changes (more-itertools' ``nth_product``, from ``recipes.py``
to ``more.py``). The package had that code before the fix, so tests that reach it
through the package pass before the fix too."""

from __future__ import annotations

import ast

from bugbout.core.plumbing.trees.git import Git, GitError
from bugbout.core.store.records import Task


def moved_note(git: Git, task: Task) -> str:
    """What a no-fail-to-pass reason adds when the fix moves a top-level function or class
    between its source modules (empty when it moves none)."""
    modules = [str(path) for path in task.source_files if str(path).endswith(".py")]
    before = {path: _definitions(git, task.parent, path) for path in modules}
    after = {path: _definitions(git, task.sha, path) for path in modules}
    moves = []
    for path in modules:
        for name in sorted(after[path] - before[path]):
            if origin := _origin(name, path, before, after):
                moves.append(f"`{name}` from {origin} to {path}")
    if not moves:
        return ""
    return (
        f"; the fix moves {', '.join(moves[:3])}"
        + (f" (and {len(moves) - 3} more)" if len(moves) > 3 else "")
        + ": the package held that code before the fix, so tests that reach it through "
        "the package pass without the fix"
    )


def _origin(name: str, path: str, before: dict[str, set[str]], after: dict[str, set[str]]) -> str:
    """The other module that defined ``name`` before the fix and does not after it."""
    return next(
        (other for other in before if other != path and name in before[other] - after[other]),
        "",
    )


def _definitions(git: Git, rev: str, path: str) -> set[str]:
    """The names of the functions and classes defined at the top of ``path`` at ``rev``
    (none when the file is absent there or is not Python that parses)."""
    try:
        module = ast.parse(git.run("show", f"{rev}:{path}"))
    except (GitError, SyntaxError, ValueError):
        return set()
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {node.name for node in module.body if isinstance(node, kinds)}
