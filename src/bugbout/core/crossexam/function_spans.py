"""Which functions of a module a change to its text lies in, by line.

A function is named by its first line, as Python's ``co_firstlineno`` (and the coverage
map) has it: its first decorator's line, else its ``def``'s, a lambda's or a
comprehension's own. A changed line may be:

- no code (blank, or only a comment): it changes nothing;
- inside functions: every function whose lines hold it (the one it is in and those
  around it: a nested function is defined while its parent runs);
- in a module's or a class's body: outside every function, or in the header of a
  function defined there (its decorators, defaults and annotations run at import; its
  name and docstring are read without calling it). Nothing narrower than the whole
  suite is safe then (``None``).
"""

from __future__ import annotations

import ast
import difflib
import io
import tokenize
from dataclasses import dataclass, field

_FUNCTIONS = (
    ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
    ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp,
)  # fmt: skip
_NO_CODE = frozenset(
    {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
     tokenize.ENDMARKER, tokenize.ENCODING}
)  # fmt: skip


def first_line(node: ast.AST) -> int:
    """The line ``co_firstlineno`` gives ``node``'s code: its first decorator's, else its own."""
    lines: list[int] = [d.lineno for d in getattr(node, "decorator_list", ())]
    return min([*lines, int(getattr(node, "lineno", 0))])


@dataclass
class Shape:
    """A module's functions, by line."""

    spans: list[tuple[int, int, int]] = field(default_factory=list)
    """(first line, last line, ``def`` line) of every function."""
    module_lines: set[int] = field(default_factory=set)
    """Code lines that a module's or a class's body runs."""
    code: set[int] = field(default_factory=set)

    @classmethod
    def of(cls, text: str) -> Shape:
        """``text``'s shape; raises ``SyntaxError`` or ``ValueError`` when it does not parse."""
        tree = ast.parse(text)
        shape = cls(code=_code_lines(text))
        bodies: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, _FUNCTIONS) and node.end_lineno is not None:
                shape.spans.append((first_line(node), node.end_lineno, node.lineno))
        for node in _outermost(tree):
            bodies |= _body_lines(node)
        shape.module_lines = shape.code - bodies
        return shape

    def around(self, line: int) -> list[tuple[int, int, int]] | None:
        """The functions whose lines hold ``line``; ``None`` when a module's or a class's
        body runs it; none when it is no code."""
        if line not in self.code:
            return []
        if line in self.module_lines:
            return None
        return [span for span in self.spans if span[0] <= line <= span[1]]


def changed_functions(old_text: str, new_text: str) -> frozenset[int] | None:
    """The first lines of the functions of ``old_text`` that the change to ``new_text``
    lies in; ``None`` when some of it lies in a module's or a class's body, or either
    text does not parse."""
    try:
        old, new = Shape.of(old_text), Shape.of(new_text)
    except (SyntaxError, ValueError):
        return None
    old_lines, new_lines = old_text.splitlines(), new_text.splitlines()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    back: dict[int, int] = {}
    """a new line -> the same old line, where the texts agree"""
    changed: list[tuple[int, int, int, int]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            back.update({j + 1: i + 1 for i, j in zip(range(i1, i2), range(j1, j2), strict=True)})
        else:
            changed.append((i1, i2, j1, j2))
    by_def: dict[int, set[int]] = {}
    for first, _, anchor in old.spans:
        by_def.setdefault(anchor, set()).add(first)
    touched: set[int] = set()
    for i1, i2, j1, j2 in changed:
        for line in range(i1 + 1, i2 + 1):
            spans = old.around(line)
            if spans is None:
                return None
            touched.update(first for first, _, _ in spans)
        for line in range(j1 + 1, j2 + 1):
            spans = new.around(line)
            if spans is None:
                return None
            for _, _, anchor in spans:  # the same function in the old text: its def line agrees
                touched |= by_def.get(back.get(anchor, 0), set())
    return frozenset(touched)


def _code_lines(text: str) -> set[int]:
    """The lines that hold code: not blank, not only a comment. A coding declaration
    counts as code."""
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type not in _NO_CODE:
            lines.update(range(token.start[0], token.end[0] + 1))
    for number, line in enumerate(text.splitlines()[:2], 1):
        if line.lstrip().startswith("#") and "coding" in line:
            lines.add(number)
    return lines


def _outermost(tree: ast.AST) -> list[ast.AST]:
    """The functions in no other function (a module's or a class's own)."""
    found: list[ast.AST] = []
    pending = [tree]
    while pending:
        node = pending.pop()
        for child in ast.iter_child_nodes(node):
            (found if isinstance(child, _FUNCTIONS) else pending).append(child)
    return found


def _body_lines(node: ast.AST) -> set[int]:
    """The lines only ``node``'s own code runs: a ``def``'s statements after its docstring,
    unless they share a line with its header (a lambda's or a comprehension's: none)."""
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.end_lineno is None:
        return set()
    body = node.body
    if ast.get_docstring(node, clean=False) is not None:
        body = body[1:]
    if not body:
        return set()
    header = [node.lineno, *(d.end_lineno or 0 for d in node.decorator_list)]
    header += [n.end_lineno or 0 for n in ast.walk(node.args) if hasattr(n, "end_lineno")]
    if node.returns is not None:
        header.append(node.returns.end_lineno or 0)
    if node.body is not body:  # the docstring is read without calling the function
        header.append(node.body[0].end_lineno or 0)
    start = body[0].lineno
    if start <= max(header):
        start = max(header) + 1
    return set(range(start, node.end_lineno + 1))
