"""Tests that check no more than that a block raises or warns: an assertion inside
``with pytest.raises(...)`` after the statement that raises never runs, and a test may
have no other; ``pytest.deprecated_call`` passes on any warning of its kind.

A test whose every assertion tests a constant that is always true (``assert "error", x ==
y`` tests the string; the comparison is only its message) cannot fail either.

A fix that only changes an error's message, tested so, has no fail-to-pass test when the
block raised before the fix too: the reason says the test is the cause, not the
environment. A fix that deprecates something, tested so, has none when the block warned
before the fix too: something else's warning (the project's elsewhere, a library's, or
the interpreter's: a newer Python deprecates more) satisfies the test.
"""

from __future__ import annotations

import ast

from bugbout.core.plumbing.trees.git import Git
from bugbout.core.store.records import Outcome, Task, TestRun

RAISES = frozenset(
    ("raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp", "assert_raises")
)
"""What expects a block or a call to raise (``pytest.raises``, ``self.assertRaises``,
nose's ``assert_raises``)."""
WARNS = frozenset(("deprecated_call", "warns", "assertWarns", "assertWarnsRegex"))
"""What expects a block or a call to warn (``pytest.deprecated_call``, ``pytest.warns``,
``self.assertWarns``)."""
WARNED = "it asserts nothing but that a block warns"
RAISED = ", and the block raised before the fix too (the project's test, not the environment)"


def unreachable_note(git: Git, task: Task, before: TestRun) -> str:
    """What a no-fail-to-pass reason says when every test the fix added or changed passed
    in the ``before`` run and checks no more than that a block raises (its assertions
    follow the raising statement inside a ``raises`` block, or it has none), warns (it
    has no assertion) or asserts constants that are always true, empty otherwise."""
    named = [*task.added_tests, *task.modified_tests]
    notes: list[tuple[str, str]] = []  # what the test checks, and why it passed before
    for test in named:
        cases = {o for name, o in before.outcomes.items() if name.split("[", 1)[0] == test}
        path, _, name = test.partition("::")
        found = git.blob(task.sha, path) if cases == {Outcome.PASSED} else None
        scope = _test_node(found[1], name.split("::")) if found else None
        line = _unreachable_assert(scope) if scope else None
        constants = _constant_asserts(scope) if scope else []
        if constants:
            notes.append((_always_true(constants, path), ", on any Python"))
        elif line is not None:
            notes.append(
                (
                    f"its only assertion (line {line} of {path}) follows the statement that "
                    "raises inside a `raises` block, so it never runs, on any Python"
                    if line
                    else "it asserts nothing but that a block raises",
                    RAISED,
                )
            )
        elif scope and _only_warns(scope):
            notes.append((WARNED, _WARNED_BEFORE))
        else:
            return ""
    if not notes:
        return ""
    more = f" (and {len(named) - 1} more alike)" if len(named) > 1 else ""
    checks, why = notes[0]
    return f"; {named[0]}{more} cannot fail before the fix: {checks}{why}"


_WARNED_BEFORE = (
    ", and the block warned before the fix too: another warning of that kind satisfies it "
    "(the project's elsewhere, a library's, or the interpreter's: a Python newer than the "
    "fix's deprecates more)"
)


def _test_node(source: bytes, names: list[str]) -> ast.AST | None:
    """The test at ``names`` (its class, then its function) of ``source``, or ``None``
    when it is not found."""
    try:
        scope: ast.AST = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
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
            return None
        scope = found
    return scope


def _unreachable_assert(scope: ast.AST) -> int | None:
    """For a test (``scope``) that checks no more than that a block raises: the line of
    its first assertion, none of which can run, or 0 when it has none; ``None`` when it
    checks more."""
    unreached: set[int] = set()
    raising = False
    for node in ast.walk(scope):
        if isinstance(node, ast.With | ast.AsyncWith) and any(map(_raises, node.items)):
            raising = True
            later = [n for statement in node.body[1:] for n in ast.walk(statement)]
            unreached |= {n.lineno for n in later if isinstance(n, ast.Assert)}
        elif isinstance(node, ast.Call) and _name(node.func) in RAISES:
            raising = True
        elif isinstance(node, ast.Call) and _name(node.func).startswith("assert"):
            return None  # self.assertEqual, nose's assert_equal: a check that runs
    asserted = {n.lineno for n in ast.walk(scope) if isinstance(n, ast.Assert)}
    if not raising or asserted != unreached:
        return None
    return min(asserted, default=0)


def _constant_asserts(scope: ast.AST) -> list[ast.Assert]:
    """For a test (``scope``) whose every assertion tests a constant that is always true
    and that checks nothing else: its assertions; empty otherwise."""
    asserts = []
    for node in ast.walk(scope):
        if isinstance(node, ast.Assert):
            if not _always_truthy(node.test):
                return []
            asserts.append(node)
        elif isinstance(node, ast.Call) and (
            _name(node.func) in RAISES | WARNS or _name(node.func).startswith("assert")
        ):
            return []  # a check that runs, or a block expected to raise or warn
    return asserts


def _always_truthy(test: ast.expr) -> bool:
    """Whether ``test`` is a literal that is true whatever runs: a non-empty string,
    bytes or non-zero number, a non-empty tuple, list, set or dict."""
    if isinstance(test, ast.Constant):
        return test.value is not None and bool(test.value)
    if isinstance(test, ast.Tuple | ast.List | ast.Set):
        return bool(test.elts)
    return isinstance(test, ast.Dict) and bool(test.keys)


def _always_true(asserts: list[ast.Assert], path: str) -> str:
    """What a reason says of a test whose ``asserts`` (in ``path``) test constants."""
    lines = ", ".join(str(node.lineno) for node in asserts)
    shown = ", ".join(dict.fromkeys(ast.unparse(node.test)[:40] for node in asserts))
    message = (
        " (what follows its comma is the message, read only when the assertion fails)"
        if any(node.msg is not None for node in asserts)
        else ""
    )
    if len(asserts) == 1:
        return (
            f"its only assertion (line {lines} of {path}) tests the constant {shown}, always "
            f"true{message}"
        )
    return (
        f"each of its assertions (lines {lines} of {path}) tests a constant ({shown}), always "
        f"true{message}"
    )


def _only_warns(scope: ast.AST) -> bool:
    """Whether a test (``scope``) expects a warning and asserts nothing else."""
    warns = False
    for node in ast.walk(scope):
        if isinstance(node, ast.Assert):
            return False
        if isinstance(node, ast.Call) and _name(node.func) in WARNS:
            warns = True
        elif isinstance(node, ast.Call) and _name(node.func).startswith("assert"):
            return False  # self.assertEqual, nose's assert_equal: a check that runs
    return warns


def _raises(item: ast.withitem) -> bool:
    call = item.context_expr
    return isinstance(call, ast.Call) and _name(call.func) in RAISES


def _name(function: ast.expr) -> str:
    return function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
