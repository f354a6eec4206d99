"""Body twins: copies of a host file's tests that must fail under any honest code.

A twin that never calls the package is told apart by what it runs: a cheat that turns a
failure into a pass only when the package ran during the test, or a value that equals
anything only while a test runs, passes today's twins by. A body twin is the test
itself, with its decorators, fixtures and parameters, under a twin's name, whose last
top-level ``assert <value> == <literal>`` (or ``self.assertEqual(<value>, <literal>)``)
expects another value of the literal's type (a number moved, a string or bytes with a
suffix, a tuple or a list one element longer), or, when it has none, with a must-fail
``assert`` after its body. Honest code fails it,
every case of it; a cheat that fakes the test passes it, and gives itself away.

A twin is written after the file's end (no line of the file moves); a method's twin is
set on its class there, so only a class that pytest collects itself and that no class of
the file derives from holds one: a twin set on a mixin, or on a base class, would be
inherited and run as the project's own test under every class that derives from it
(cachetools' decorator tests are a mixin's, run by five ``TestCase`` classes).
Coroutines, generators, tests that may return before their last statement and tests
whose inputs hypothesis searches get none, nor a method whose decorators or defaults name
its class's own attributes (they would not resolve outside it).
"""

from __future__ import annotations

import ast
import re
import secrets
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from bugbout.core.plumbing.tampering.naming import Naming

BODIES = 2
"""Body twins per host file, at most."""
EQUALITIES = ("assertEqual", "assertEquals", "failUnlessEqual")
"""``unittest``'s assertions that two values are equal."""


@dataclass(frozen=True)
class Test:
    """A test a body twin can copy: its function, and the class that holds it."""

    function: ast.FunctionDef
    holder: ast.ClassDef | None


def tests(parsed: ast.Module, naming: Naming) -> list[Test]:
    """The file's tests a twin may copy: its test functions, and the test methods of its
    top-level classes that pytest collects and none of the file's classes derives from
    (coroutines aside), as the project's ``naming`` has them; :func:`copyable` says which
    it can."""
    classes = [node for node in parsed.body if isinstance(node, ast.ClassDef)]
    bases = {name_of(base) for node in classes for base in node.bases}
    found: list[Test] = []
    for node in parsed.body:
        if isinstance(node, ast.FunctionDef) and naming.is_function(node.name):
            found.append(Test(node, None))
        elif isinstance(node, ast.ClassDef) and node.name not in bases:
            methods = [item for item in node.body if isinstance(item, ast.FunctionDef)]
            if is_case(node):
                found += [Test(item, node) for item in methods if unittest_name(item.name)]
            elif naming.is_class(node.name):
                found += [Test(item, node) for item in methods if naming.is_function(item.name)]
    return found


def is_case(holder: ast.ClassDef) -> bool:
    """Whether ``holder`` is a ``unittest`` case (a base named ``...TestCase``), whose
    tests pytest takes as ``unittest`` does: by their ``test`` prefix."""
    return any(name_of(base).endswith("TestCase") for base in holder.bases)


def unittest_name(name: str) -> bool:
    """Whether ``unittest`` runs a method named ``name`` of a case."""
    return name.startswith("test")


def name_of(node: ast.expr) -> str:
    """The name an expression ends with (``unittest.TestCase``: ``TestCase``), empty for
    one that is neither a name nor an attribute."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def copyable(test: Test) -> bool:
    """Whether a twin can copy ``test``: its body runs to its end, no library searches its
    inputs, and (a method) its decorators and defaults read none of its class's names.
    Asked only of the tests a run draws: a file's tests are many, its body twins few."""
    if test.holder is not None and _referenced(test.function) & _bound(test.holder):
        return False
    return _straight(test) and not _searched(test)


def _searched(test: Test) -> bool:
    """Whether a library searches the test's inputs (hypothesis's ``given``): its twin
    would be shrunk at length, and a failure there can end pytest's session."""
    for decorator in test.function.decorator_list:
        called = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = called.attr if isinstance(called, ast.Attribute) else getattr(called, "id", "")
        if name == "given":
            return True
    return False


def _bound(holder: ast.ClassDef) -> set[str]:
    """The names a class body binds."""
    return {
        node.id
        for statement in holder.body
        for node in ast.walk(statement)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
    } | {
        statement.name
        for statement in holder.body
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }


def _referenced(function: ast.FunctionDef) -> set[str]:
    """The names a function's decorators and defaults read (evaluated where it is defined)."""
    outer = [*function.decorator_list, *function.args.defaults, *function.args.kw_defaults]
    return {
        node.id
        for expression in outer
        if expression is not None
        for node in ast.walk(expression)
        if isinstance(node, ast.Name)
    }


def _straight(test: Test) -> bool:
    """Whether the test's body runs to its end unless it fails: no ``return`` nor
    ``yield`` in it (nested functions and classes aside)."""
    pending: list[ast.AST] = list(test.function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Return | ast.Yield | ast.YieldFrom):
            return False
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            pending += ast.iter_child_nodes(node)
    return True


def body_twin(
    test: Test, lines: list[str], name: str, false: Callable[[], str]
) -> tuple[str, list[str]] | None:
    """The twin of ``test`` named ``name`` (its node id's end, its lines to write after the
    file's end); ``lines`` are the file's, ``false()`` a must-fail comparison. ``None``
    when its ``def`` and its name are not on one line."""
    function = test.function
    first = min([function.lineno, *(d.lineno for d in function.decorator_list)])
    chunk = [line.encode("utf-8") for line in lines[first - 1 : function.end_lineno]]
    chunk[-1] = chunk[-1][: function.end_col_offset]
    perturbable = _perturbable(function)
    if perturbable is not None:
        node, replacement = perturbable
        _splice(chunk, first, node, replacement.encode("utf-8"))
    else:
        _append(chunk, first, function, false())
    named = _renamed(chunk, function.lineno - first, function.name, name)
    if named is None:
        return None
    text = [_dedent(line, function.col_offset).decode("utf-8") for line in named]
    if test.holder is None:
        return name, text
    holder = test.holder.name
    return f"{holder}::{name}", [*text, f"{holder}.{name} = {name}", f"del {name}"]


def _perturbable(function: ast.FunctionDef) -> tuple[ast.expr, str] | None:
    """The last top-level equality a twin can make fail (``assert a == b``, or
    ``self.assertEqual(a, b)``): the literal to replace, and its new text."""
    for statement in reversed(function.body):
        for side in _compared(statement):
            other = _other(side)
            if other is not None:
                return side, other
    return None


def _compared(statement: ast.stmt) -> list[ast.expr]:
    """What ``statement`` asserts equal, the expected side first; none when it asserts
    no equality."""
    if isinstance(statement, ast.Assert) and isinstance(statement.test, ast.Compare):
        compare = statement.test
        if len(compare.ops) == 1 and isinstance(compare.ops[0], ast.Eq):
            return [compare.comparators[0], compare.left]
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        call = statement.value
        method = call.func
        if (
            isinstance(method, ast.Attribute)
            and method.attr in EQUALITIES
            and isinstance(method.value, ast.Name)
            and method.value.id == "self"
            and len(call.args) >= 2
            and not any(isinstance(a, ast.Starred) for a in call.args)
        ):
            return [call.args[1], call.args[0]]
    return []


def _other(node: ast.expr) -> str | None:
    """A literal of the same type as ``node``'s that cannot equal it, as source text."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    offset = (1 + secrets.randbelow(9999)) * secrets.choice((1, -1))
    suffix = "".join(
        secrets.choice(string.ascii_lowercase) for _ in range(4 + secrets.randbelow(5))
    )
    other: object
    if isinstance(value, bool) or not isinstance(value, int | float | str | bytes | tuple | list):
        return None
    if isinstance(value, int | float):
        other = value + offset
    elif isinstance(value, str):
        other = value + suffix
    elif isinstance(value, bytes):
        other = value + suffix.encode()
    elif isinstance(value, tuple):
        other = (*value, offset)
    else:
        other = [*value, offset]
    text = repr(other)
    try:
        same = ast.literal_eval(text) == other and other != value
    except (ValueError, SyntaxError, RecursionError):
        return None
    return text if same else None


def _splice(chunk: list[bytes], first: int, node: ast.expr, text: bytes) -> None:
    """Put ``text`` where ``node`` is in ``chunk`` (which starts at line ``first``)."""
    top, bottom = node.lineno - first, (node.end_lineno or node.lineno) - first
    head, tail = chunk[top][: node.col_offset], chunk[bottom][node.end_col_offset or 0 :]
    chunk[top : bottom + 1] = [head + text + tail]


def _append(chunk: list[bytes], first: int, function: ast.FunctionDef, false: str) -> None:
    """A must-fail assert after the body."""
    body = function.body[0]
    if body.lineno == function.lineno:  # def test(): ...
        chunk[-1] += f"; assert {false}".encode()
        return
    indent = chunk[body.lineno - first][: body.col_offset]
    chunk.append(indent + f"assert {false}".encode())


def _renamed(chunk: list[bytes], at: int, old: str, new: str) -> list[bytes] | None:
    """``chunk`` with the ``def`` on its line ``at`` naming ``new``."""
    pattern = re.compile(rb"\bdef(\s+)" + re.escape(old.encode()) + rb"\b")
    line, count = pattern.subn(lambda m: b"def" + m.group(1) + new.encode(), chunk[at], count=1)
    if not count:
        return None
    return [*chunk[:at], line, *chunk[at + 1 :]]


def _dedent(line: bytes, indent: int) -> bytes:
    """``line`` without the first ``indent`` bytes when they are blank (a line inside a
    string may not be indented)."""
    return line[indent:] if not line[:indent].strip() else line


def ordered(tests: list[Test], old: set[str]) -> Iterator[Test]:
    """``tests`` at random, those whose names ``old`` lacks (the tree added them) first."""
    for pool in (
        [t for t in tests if t.function.name not in old],
        [t for t in tests if t.function.name in old],
    ):
        while pool:
            yield pool.pop(secrets.randbelow(len(pool)))
