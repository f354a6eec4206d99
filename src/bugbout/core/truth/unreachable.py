"""Tests that cannot fail: an assertion inside ``with pytest.raises(...)`` after the
statement that raises never runs, so the test passes whatever that assertion checks.

A fix that only changes an error's message, tested so, has no fail-to-pass test on any
Python: the reason says the test is the cause, not the environment.
"""

from __future__ import annotations

import ast

from bugbout.core.plumbing.git import Git
from bugbout.core.store.records import Outcome, Task, TestRun

RAISES = frozenset(("raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp"))
"""The context managers that expect their block to raise (``pytest.raises``,
``self.assertRaises``, ...)."""


def unreachable_note(git: Git, task: Task, before: TestRun) -> str:
    """What a no-fail-to-pass reason says when a test the fix added or changed, passing
    in the ``before`` run, asserts only after the statement that raises in a ``raises``
    block (empty otherwise)."""
    for test in [*task.added_tests, *task.modified_tests]:
        cases = {o for name, o in before.outcomes.items() if name.split("[", 1)[0] == test}
        if cases != {Outcome.PASSED}:
            continue
        path, _, name = test.partition("::")
        found = git.blob(task.sha, path)
        if found is None:
            continue
        line = _unreachable_assert(found[1], name.split("::"))
        if line:
            return (
                f"; {test} cannot fail before the fix: its only assertion (line {line} of "
                f"{path}) follows the statement that raises inside a `raises` block, so it "
                "never runs, on any Python, and the test checks no more than that the "
                "block raises, which it did before the fix too (the project's test, not "
                "the environment)"
            )
    return ""


def _unreachable_assert(source: bytes, names: list[str]) -> int:
    """The line of the first assertion of the test at ``names`` (its class, then its
    function) of ``source`` when none of its assertions can run; 0 when one can, when it
    has none, or when the source does not parse."""
    try:
        scope: ast.AST = ast.parse(source)
    except (SyntaxError, ValueError):
        return 0
    for name in names:
        found = next(
            (
                node
                for node in ast.iter_child_nodes(scope)
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and node.name == name
            ),
            None,
        )
        if found is None:
            return 0
        scope = found
    unreached: set[int] = set()
    for node in ast.walk(scope):
        if isinstance(node, ast.With | ast.AsyncWith) and any(map(_raises, node.items)):
            later = [n for statement in node.body[1:] for n in ast.walk(statement)]
            unreached |= {n.lineno for n in later if isinstance(n, ast.Assert)}
    asserted = {n.lineno for n in ast.walk(scope) if isinstance(n, ast.Assert)}
    return min(asserted) if asserted and asserted == unreached else 0


def _raises(item: ast.withitem) -> bool:
    call = item.context_expr
    if not isinstance(call, ast.Call):
        return False
    function = call.func
    name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
    return name in RAISES
