"""Tests that skip themselves after their fix: the condition they skip on, read from
their decorators at the fix (``@skipIf(version_info[:2] < (3, 8), 'accumulate with
initial needs 3.8+')``: more-itertools 2019, a fix for a Python that was not out yet).
The runs record that a test skipped, not why; its source says why."""

from __future__ import annotations

import ast

from bugbout.core.plumbing.trees.git import Git, GitError
from bugbout.core.store.records import Outcome, Task, TestRun

SKIPS = frozenset(("skip", "skipIf", "skipUnless", "skipif"))
"""What skips a test or a class by a decorator (``unittest.skipIf``,
``pytest.mark.skipif``, ``pytest.mark.skip``)."""


def skip_note(git: Git, task: Task, after: TestRun) -> str:
    """What a no-fail-to-pass reason adds when every test the fix added or changed that
    ran ``after`` it skipped itself: the decorators it skipped by (empty when none is
    found, or when one of those tests did not skip)."""
    named = {*task.added_tests, *task.modified_tests}
    ran = sorted({test.split("[", 1)[0] for test in after.outcomes} & named)
    if not ran or any(
        outcome != Outcome.SKIPPED
        for test, outcome in after.outcomes.items()
        if test.split("[", 1)[0] in named
    ):
        return ""
    found = [f"`{skip}` ({test})" for test in ran for skip in _skips(git, task.sha, test)]
    if not found:
        return ""
    return f"; it skipped by {', '.join(dict.fromkeys(found[:3]))}"


def _skips(git: Git, rev: str, test: str) -> list[str]:
    """The skip decorators of test ``path::[Class::]name`` at ``rev``, its class's first."""
    path, *names = test.split("::")
    try:
        body = ast.parse(git.run("show", f"{rev}:{path}")).body
    except (GitError, SyntaxError, ValueError):
        return []
    decorators: list[ast.expr] = []
    for name in names:
        node = next(
            (
                node
                for node in body
                if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and node.name == name
            ),
            None,
        )
        if node is None:
            return []
        decorators += node.decorator_list
        body = node.body
    return [ast.unparse(decorator) for decorator in decorators if _skips_by(decorator)]


def _skips_by(decorator: ast.expr) -> bool:
    """Whether ``decorator`` is a skip: its callee's last name is one of :data:`SKIPS`."""
    callee = decorator.func if isinstance(decorator, ast.Call) else decorator
    last = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", "")
    return last in SKIPS
