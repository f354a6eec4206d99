"""Finding the tests a module defines by parsing it, never by grepping a diff."""

from __future__ import annotations

import ast
import fnmatch
import io
import re
import tokenize
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath

TEST_MODULE_PATTERNS = ("test_*.py", "*_test.py")

# A line that starts at column 0 with code starts a top-level statement, unless it is a
# clause of the compound statement before it, closes brackets, or belongs to decorators.
_STATEMENT_START = re.compile(r"^[^\s#]", re.MULTILINE)
_CLAUSES = ("else", "elif", "except", "finally")
_CLOSING = (")", "]", "}")
_BODY_START = re.compile(r"^( +)[^\s#]", re.MULTILINE)
"""The first indented line of code: where a class's body starts, and its indentation."""


ROOT_TEST_MODULES = ("test.py", "tests.py")
"""Single test modules at the root of a repository that pytest runs when named."""


def is_test_module(path: str) -> bool:
    """A module pytest collects by default: ``test_*.py`` or ``*_test.py``."""
    name = PurePosixPath(path).name
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in TEST_MODULE_PATTERNS)


def defined_tests(source: bytes | str | None) -> dict[str, int | None]:
    """Every test a module defines (``test*`` functions and methods of ``Test*`` classes or
    ``TestCase`` subclasses), by ``Class::name``, with its number of parametrize cases.

    The count is the product of the cases of every ``parametrize`` decorator (1 without
    any), or ``None`` when a decorator's cases are not a literal list or tuple. A module
    that does not parse defines no tests.
    """
    if source is None:
        return {}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    tests: dict[str, int | None] = {}
    _collect(tree.body, "", tests)
    return tests


def defined_tests_memo(
    source: bytes, memo: dict[str, dict[str, int | None]]
) -> dict[str, int | None]:
    """``defined_tests(source)``, parsing only the statements ``memo`` lacks.

    Successive versions of a test module share most of their top-level statements, so a
    history walk that keeps one ``memo`` parses each statement once instead of each whole
    module twice per commit; a changed class is parsed member by member, so one changed
    method does not cost its whole class. The result is the same: a split in the wrong
    place (inside a string or brackets) leaves a piece that does not parse, which is then
    joined to the pieces after it until they parse together; a module that does not parse
    to its end is parsed whole, as ``defined_tests`` does.
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        text = source.decode(encoding)
        if "barry_as_FLUFL" in text:  # the one __future__ import that changes parsing
            raise ValueError(text)
        tests = _pieces_tests(text, memo)
        if tests is None:
            raise ValueError(text)
        return tests
    except (SyntaxError, ValueError, UnicodeDecodeError, LookupError):
        return defined_tests(source)


def _pieces_tests(
    text: str, memo: dict[str, dict[str, int | None]], outdented: frozenset[int] = frozenset()
) -> dict[str, int | None] | None:
    """The tests of the statements of ``text``, cut before each line that may start one,
    a piece that does not parse joined to the next; ``None`` when the last pieces do not
    parse together, or when one of the ``outdented`` lines (numbered from 1) is not inside
    an expression of its piece."""
    tests: dict[str, int | None] = {}
    pending = ""
    line = 1  # the number of pending's first line
    for chunk in _top_level_chunks(text):
        pending += chunk
        statement = pending.rstrip()  # the same whether or not it ends the text
        spanned = pending.count("\n") + (not pending.endswith("\n"))
        inner = sorted(n - line + 1 for n in outdented if line <= n < line + spanned)
        found = (
            _statement_tests(statement, memo)
            if not inner
            else _continued_tests(statement, tuple(inner), memo)
        )
        if found is None:
            continue  # cut inside a statement: join the next piece
        if found is _OUTSIDE:
            return None
        tests.update(found)
        line += pending.count("\n")
        pending = ""
    return None if pending else tests


_OUTSIDE: dict[str, int | None] = {}
"""What :func:`_continued_tests` gives for a statement with a line that is not inside an
expression."""


def _continued_tests(
    statement: str, lines: tuple[int, ...], memo: dict[str, dict[str, int | None]]
) -> dict[str, int | None] | None:
    """The tests of ``statement`` whose ``lines`` were left as they were when its class
    body was dedented: :data:`_OUTSIDE` unless each is inside a multi-line expression (a
    string or brackets), where indentation changes nothing; ``None`` when it does not
    parse."""
    key = f"{statement}\0{lines}"
    found = memo.get(key)
    if found is None:
        body = _parsed(statement)
        if body is None:
            return None
        spans = [
            (node.lineno, node.end_lineno or node.lineno)
            for node in ast.walk(ast.Module(body=body, type_ignores=[]))
            if isinstance(node, ast.expr)
        ]
        if not all(any(start < n <= end for start, end in spans) for n in lines):
            return _OUTSIDE
        found = _tests_of(body)
        memo[key] = found
    return found


def _statement_tests(
    statement: str, memo: dict[str, dict[str, int | None]]
) -> dict[str, int | None] | None:
    """The tests ``statement`` defines, or ``None`` when it does not parse."""
    found = memo.get(statement)
    if found is None and statement.startswith("class "):
        found = _class_tests(statement, memo)
    if found is None:
        body = _parsed(statement)
        if body is None:
            return None
        found = _tests_of(body)
    memo[statement] = found
    return found


def _parsed(statement: str) -> list[ast.stmt] | None:
    """The statements of ``statement``, or ``None`` when it does not parse."""
    try:
        return ast.parse(statement).body
    except SyntaxError:
        return None


def _tests_of(body: list[ast.stmt]) -> dict[str, int | None]:
    """The tests ``body`` defines: name → line, as :func:`_collect` finds them."""
    found: dict[str, int | None] = {}
    _collect(body, "", found)
    return found


def _class_tests(
    statement: str, memo: dict[str, dict[str, int | None]]
) -> dict[str, int | None] | None:
    """The tests of class ``statement`` from its header and its members, each dedented
    and parsed on its own (or found in ``memo``); ``None`` when that cannot tell (a header
    that is not one class, a member that does not parse, a line of code less indented
    than the body outside a string or brackets), and the class is then parsed whole."""
    first = _BODY_START.search(statement)
    if first is None or "\\" in statement[: first.start()]:
        return None
    indent, header = first[1], statement[: first.start()]
    lines = statement[first.start() :].split("\n")
    try:
        node = ast.parse(f"{header}{indent}pass\n").body
    except SyntaxError:
        return None
    if len(node) != 1 or not isinstance(node[0], ast.ClassDef):
        return None
    keeps = _keeps_indent(indent)
    outdented = frozenset(n for n, line in enumerate(lines, 1) if not keeps(line))
    body = "\n".join(line[len(indent) :] if line.startswith(indent) else line for line in lines)
    members = _pieces_tests(body, memo, outdented)
    if members is None:
        return None
    if not _is_test_class(node[0]):
        return {}
    return {f"{node[0].name}::{name}": cases for name, cases in members.items()}


def _keeps_indent(indent: str) -> Callable[[str], bool]:
    """Whether a line of a body may be dedented by ``indent``: it starts with it, or it
    is blank or a comment (which the tokenizer skips, whatever their indentation)."""

    def keeps(line: str) -> bool:
        return line.startswith(indent) or not line.strip() or line.lstrip().startswith("#")

    return keeps


def _top_level_chunks(text: str) -> list[str]:
    """``text`` cut before each line that starts a top-level statement."""
    chunks: list[str] = []
    start = 0
    decorating = False
    for match in _STATEMENT_START.finditer(text):
        position = match.start()
        closing = text.startswith(_CLOSING, position)
        if position and not decorating and not closing and not text.startswith(_CLAUSES, position):
            chunks.append(text[start:position])
            start = position
        decorating = text[position] == "@" or (decorating and closing)
    chunks.append(text[start:])
    return chunks


def added_tests(before: dict[str, int | None], after: dict[str, int | None]) -> list[str]:
    """Tests that are new in ``after``, or that gained parametrize cases."""
    added = []
    for name, cases in after.items():
        if name not in before:
            added.append(name)
            continue
        previous = before[name]
        if cases is not None and previous is not None and cases > previous:
            added.append(name)
    return added


def changed_tests(before: bytes | None, after: bytes | None) -> list[str]:
    """Tests a module defines before and after whose code changed: decorators or body,
    formatting and comments aside (a test defined twice counts by its last definition)."""
    old, new = _fingerprints(before), _fingerprints(after)
    return [name for name, code in new.items() if name in old and old[name] != code]


def _fingerprints(source: bytes | None) -> dict[str, str]:
    try:
        tree = ast.parse(source) if source is not None else None
    except (SyntaxError, ValueError):
        tree = None
    return {name: ast.dump(node) for name, node in _tests(tree.body, "")} if tree else {}


def _collect(body: list[ast.stmt], prefix: str, tests: dict[str, int | None]) -> None:
    for name, node in _tests(body, prefix):
        tests[name] = _cases(node.decorator_list)


def _tests(
    body: list[ast.stmt], prefix: str
) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Each test function of ``body`` (and of its test classes), by ``Class::name``."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name.startswith("test"):
                yield prefix + node.name, node
        elif isinstance(node, ast.ClassDef) and _is_test_class(node):
            yield from _tests(node.body, f"{prefix}{node.name}::")


def _is_test_class(node: ast.ClassDef) -> bool:
    """Collected by pytest: named ``Test*``, or a ``unittest.TestCase`` subclass."""
    if node.name.startswith("Test"):
        return True
    for base in node.bases:
        name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
        if name.endswith("TestCase"):
            return True
    return False


def _cases(decorators: list[ast.expr]) -> int | None:
    total: int | None = 1
    for decorator in decorators:
        if not (isinstance(decorator, ast.Call) and _is_parametrize(decorator.func)):
            continue
        values = decorator.args[1] if len(decorator.args) > 1 else None
        for keyword in decorator.keywords:
            if keyword.arg == "argvalues":
                values = keyword.value
        if isinstance(values, ast.List | ast.Tuple | ast.Set) and total is not None:
            total *= len(values.elts)
        else:
            total = None
    return total


def _is_parametrize(func: ast.expr) -> bool:
    if isinstance(func, ast.Attribute):
        return func.attr == "parametrize"
    return isinstance(func, ast.Name) and func.id == "parametrize"
