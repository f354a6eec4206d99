"""Mutations: small bugs put into a module's functions, found by reading its syntax tree.

Each mutation changes one spot of one function and nothing else of the file: the source is
edited where the syntax tree says the spot is (an operator between its operands, a
constant, a condition, a returned value, a statement), so the comments and the layout
around it stay as they were. A mutation whose module no longer parses, or parses to the
same tree, is not made.
"""

from __future__ import annotations

import ast
import bisect
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pydantic import Field, field_validator

from bugbout.core.contract.types import Options

OPERATORS = (
    "arithmetic", "comparison", "boundary", "boolean", "negation", "constant", "return",
    "statement",
)  # fmt: skip
"""The kinds of mutation: swapping an arithmetic operator (``+`` for ``-``), a comparison
(``==`` for ``!=``, ``<`` for ``>``), moving a boundary (``<`` for ``<=``), swapping
``and`` and ``or``, negating a condition, changing a constant (``1`` for ``0``, ``True``
for ``False``), returning ``None`` instead, and removing a statement."""

_ARITHMETIC = {
    ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "/"), ast.Div: ("/", "*"),
    ast.FloorDiv: ("//", "*"), ast.Mod: ("%", "*"), ast.Pow: ("**", "*"),
    ast.LShift: ("<<", ">>"), ast.RShift: (">>", "<<"), ast.BitOr: ("|", "&"),
    ast.BitAnd: ("&", "|"), ast.BitXor: ("^", "|"),
}  # fmt: skip
_COMPARISON = {
    ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="), ast.Lt: ("<", ">"), ast.Gt: (">", "<"),
    ast.LtE: ("<=", ">="), ast.GtE: (">=", "<="), ast.Is: ("is", "is not"),
    ast.IsNot: ("is not", "is"), ast.In: ("in", "not in"), ast.NotIn: ("not in", "in"),
}  # fmt: skip
_BOUNDARY = {ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">")}
_OPPOSITE = {
    ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="), ast.Lt: ("<", ">="), ast.GtE: (">=", "<"),
    ast.Gt: (">", "<="), ast.LtE: ("<=", ">"), ast.Is: ("is", "is not"),
    ast.IsNot: ("is not", "is"), ast.In: ("in", "not in"), ast.NotIn: ("not in", "in"),
}  # fmt: skip
"""A comparison negated as a person writes it: ``x is not None``, never ``not x is None``."""
_BOOLEAN = {ast.And: ("and", "or"), ast.Or: ("or", "and")}
_REMOVABLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_TEXT = (ast.Constant, ast.JoinedStr)
"""A ``%`` whose left is text formats it."""
_LOOSE = (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr)
"""Expressions that bind more loosely than ``not``."""


class MutantOptions(Options):
    """Options of the ``mutants`` miner (``miner:``): which injected bugs become tasks."""

    ref: str | None = None
    """The commit whose code is mutated; ``HEAD`` when unset."""
    limit: int = Field(default=50, ge=1)
    """The most tasks kept."""
    seed: int = 0
    """Draws the order mutations are tried in: another seed, other tasks."""
    operators: tuple[str, ...] = OPERATORS
    """The kinds of mutation made (see :data:`OPERATORS`)."""
    per_function: int = Field(default=2, ge=1)
    """The most mutations tried in one function."""
    test_timeout: float = Field(default=10, gt=0)
    """Seconds one test may run on a mutant before the mutant is dropped as hanging."""

    @field_validator("operators")
    @classmethod
    def _known(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(value) - set(OPERATORS))
        if unknown or not value:
            raise ValueError(f"{', '.join(unknown) or 'none'}: choose among {', '.join(OPERATORS)}")
        return value


@dataclass(frozen=True)
class Mutation:
    """One spot of one function changed: the module's text before and after."""

    path: str
    function: str
    """The function's qualified name in its module (``Parser.parse``)."""
    operator: str
    line: int
    """The changed line, from 1."""
    original: str
    mutated: str

    @property
    def mutated_lines(self) -> list[str]:
        """The mutated module's lines that are not in the original (stripped): what must
        never reach an agent."""
        before = {line.strip() for line in self.original.splitlines()}
        return [
            line.strip()
            for line in self.mutated.splitlines()
            if line.strip() and line.strip() not in before
        ]

    def normalised(self) -> str:
        """The mutated function's syntax tree: two mutations of one function that read
        the same (whatever their layout) give the same text."""
        tree, found = ast.parse(self.mutated), ""
        for node in ast.walk(tree):
            if isinstance(node, _FUNCTIONS) and node.lineno <= self.line <= (node.end_lineno or 0):
                found = ast.dump(node)
        return f"{self.path}:{found}"


def mutations(path: str, text: str, operators: Sequence[str] = OPERATORS) -> Iterator[Mutation]:
    """Every mutation of ``operators`` in the functions of module ``text`` (at ``path``),
    in the order of the source; none when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return
    source = _Source(text)
    original = ast.dump(tree)
    made: set[str] = set()
    for function, name in _functions(tree):
        for node in _own_nodes(function):
            for operator, start, end, replacement in _spots(node, source, operators):
                mutated = source.replace(start, end, replacement)
                if mutated in made:  # two operators, one change (negating ==, swapping it)
                    continue
                made.add(mutated)
                try:
                    changed = ast.dump(ast.parse(mutated)) != original
                except (SyntaxError, ValueError):
                    continue
                if changed:
                    line = source.line_of(start)
                    yield Mutation(path, name, operator, line, text, mutated)


def sample(found: Sequence[Mutation], *, seed: int, per_function: int) -> list[Mutation]:
    """``found`` in an order drawn from ``seed``, at most ``per_function`` of each
    function: the order candidates are tried in."""
    order = list(found)
    random.Random(seed).shuffle(order)
    taken: dict[tuple[str, str], int] = {}
    chosen = []
    for mutation in order:
        key = (mutation.path, mutation.function)
        if taken.get(key, 0) < per_function:
            taken[key] = taken.get(key, 0) + 1
            chosen.append(mutation)
    return chosen


class _Source:
    """A module's text, addressed as the syntax tree does (a line from 1, a column in
    UTF-8 bytes)."""

    def __init__(self, text: str) -> None:
        self.data = text.encode("utf-8")
        self.starts = [0]
        for line in self.data.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, line: int, column: int) -> int:
        return self.starts[line - 1] + column

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def segment(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8")

    def replace(self, start: int, end: int, replacement: str) -> str:
        return (self.data[:start] + replacement.encode("utf-8") + self.data[end:]).decode("utf-8")

    def whole_lines(self, node: ast.stmt) -> tuple[int, int] | None:
        """The lines ``node`` fills alone (but for a comment), newline included."""
        start, end = self.span(node)
        first, last = self.starts[node.lineno - 1], self.starts[node.end_lineno or node.lineno]
        after = self.data[end:last].strip()
        if self.data[first:start].strip() or (after and not after.startswith(b"#")):
            return None
        return first, last

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return start, end


def _functions(tree: ast.Module) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    """Every function of the module with its qualified name, outer ones first."""
    pending: list[tuple[ast.AST, str]] = [(tree, "")]
    while pending:
        node, prefix = pending.pop(0)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _FUNCTIONS):
                name = f"{prefix}{child.name}"
                yield child, name
                pending.append((child, f"{name}."))
            elif isinstance(child, ast.ClassDef):
                pending.append((child, f"{prefix}{child.name}."))
            elif not isinstance(child, ast.expr):
                pending.append((child, prefix))


def _own_nodes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """The nodes of ``function``'s body, not those of functions or classes inside it (they
    are functions of their own) nor its docstring."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    pending: list[ast.AST] = list(body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef, ast.Lambda, ast.JoinedStr)):
            continue
        yield node
        pending.extend(ast.iter_child_nodes(node))


def _spots(
    node: ast.AST, source: _Source, operators: Sequence[str]
) -> Iterator[tuple[str, int, int, str]]:
    """``(operator, start, end, replacement)`` for each mutation of ``node`` itself."""
    if isinstance(node, ast.BinOp) and "arithmetic" in operators:
        symbols = _ARITHMETIC.get(type(node.op))
        formats = isinstance(node.op, ast.Mod) and isinstance(node.left, _TEXT)
        if symbols and not formats:
            yield from _between("arithmetic", node.left, node.right, symbols, source)
    elif isinstance(node, ast.Compare) and len(node.ops) == 1:
        kind = type(node.ops[0])
        for operator, table in (("comparison", _COMPARISON), ("boundary", _BOUNDARY)):
            if operator in operators and kind in table:
                yield from _between(operator, node.left, node.comparators[0], table[kind], source)
    elif isinstance(node, ast.BoolOp) and "boolean" in operators and len(node.values) == 2:
        symbols = _BOOLEAN[type(node.op)]
        yield from _between("boolean", node.values[0], node.values[1], symbols, source)
    elif isinstance(node, ast.AugAssign) and "arithmetic" in operators:
        symbols = _ARITHMETIC.get(type(node.op))
        if symbols:
            assigned = (f"{symbols[0]}=", f"{symbols[1]}=")
            yield from _between("arithmetic", node.target, node.value, assigned, source)
    elif isinstance(node, ast.Constant) and "constant" in operators:
        yield from _constant(node, source)
    if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)) and "negation" in operators:
        test = node.test
        opposite = _OPPOSITE.get(type(test.ops[0])) if isinstance(test, ast.Compare) else None
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and opposite:
            yield from _between("negation", test.left, test.comparators[0], opposite, source)
        else:
            yield _negated(test, source)
    if isinstance(node, ast.Return) and "return" in operators and _returns_value(node.value):
        yield ("return", *source.span(node), "return None")
    if isinstance(node, _REMOVABLE) and "statement" in operators:
        removed = source.whole_lines(node)
        if removed is not None:
            yield ("statement", *removed, "")


def _between(
    operator: str, left: ast.AST, right: ast.AST, symbols: tuple[str, str], source: _Source
) -> Iterator[tuple[str, int, int, str]]:
    """Replace the operator ``symbols[0]`` that stands between ``left`` and ``right``."""
    start, end = source.span(left)[1], source.span(right)[0]
    gap = source.segment(start, end)
    old, new = symbols
    at = _token(gap, old)
    if at >= 0:
        begin = start + len(gap[:at].encode("utf-8"))
        yield (operator, begin, begin + len(old.encode("utf-8")), new)


def _token(gap: str, symbol: str) -> int:
    """Where ``symbol`` stands alone in ``gap`` (code between two operands: whitespace,
    brackets, perhaps a comment), or -1."""
    code = gap.split("#", 1)[0]
    for at in range(len(code) - len(symbol) + 1):
        if code[at : at + len(symbol)] != symbol:
            continue
        before = code[at - 1] if at else " "
        after = code[at + len(symbol)] if at + len(symbol) < len(code) else " "
        word = symbol[0].isalpha()
        if word and (before.isalnum() or after.isalnum() or before == "_" or after == "_"):
            continue
        if not word and (before in "*/<>=!" or after in "*/<>="):
            continue
        return at
    return -1


def _returns_value(value: ast.expr | None) -> bool:
    return value is not None and not (isinstance(value, ast.Constant) and value.value is None)


def _constant(node: ast.Constant, source: _Source) -> Iterator[tuple[str, int, int, str]]:
    value = node.value
    start, end = source.span(node)
    if isinstance(value, bool):
        yield ("constant", start, end, str(not value))
    elif isinstance(value, int) and source.segment(start, end).isdigit():
        yield ("constant", start, end, "1" if value == 0 else "0" if value == 1 else str(value + 1))


def _negated(test: ast.expr, source: _Source) -> tuple[str, int, int, str]:
    """A condition negated as a person would write it: ``not x``, ``x`` for ``not x``,
    brackets only where ``not`` would bind otherwise."""
    start, end = source.span(test)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = test.operand
        text = source.segment(*source.span(inner))
        return ("negation", start, end, f"({text})" if isinstance(inner, _LOOSE) else text)
    text = source.segment(start, end)
    return ("negation", start, end, f"not ({text})" if isinstance(test, _LOOSE) else f"not {text}")
