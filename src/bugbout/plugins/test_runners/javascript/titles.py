"""The tests a JavaScript or TypeScript test file defines, found by parsing it with
tree-sitter's grammars: each ``it``/``test``/``specify`` block by its full title path
(the titles of the ``describe``/``suite``/``context`` blocks around it, then its own,
joined with `` > `` as Vitest and Jest print them), with its number of cases.

A title is the text of its string or template literal; any other expression (a template
with substitutions, a name) is kept as its source text, as the runner's own title for an
``.each`` case (``adds %i``) is kept with its placeholders. ``.each`` and ``.for``
tables count one case per row (an array literal's elements, a tagged table's rows), and
multiply the cases of the blocks inside a ``describe.each``; the count is ``None`` when
it cannot be told (a table that is not a literal, a block inside a loop or a callback
other than a block's). Tests that never run (``.skip``, ``.todo``, ``xit``, one without
a function) are left out: a test a fix unskips is one it adds. A top-level ``suite``
without a function (Mocha's QUnit interface) holds the top-level tests after it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import PurePosixPath

import tree_sitter
import tree_sitter_javascript
import tree_sitter_typescript

SEPARATOR = " > "
"""Between the titles of a test's path, as Vitest and Jest print it."""
GROUPS = frozenset({"describe", "suite", "context", "fdescribe"})
TESTS = frozenset({"it", "test", "specify", "fit"})
NEVER_RUN = frozenset({"xdescribe", "xcontext", "xit", "xtest", "xspecify"})
SKIPPING = frozenset({"skip", "todo"})
TABLES = frozenset({"each", "for"})
"""Modifiers whose call takes a table: the block runs once per row."""
CONDITIONS = frozenset({"skipIf", "runIf"})
"""Modifiers whose call takes a condition: the block runs once, or is skipped."""
MODIFIERS = frozenset({"only", "concurrent", "sequential", "fails", "shuffle", "serial"})
LOOPS = frozenset(
    {"for_statement", "for_in_statement", "while_statement", "do_statement"}
)  # fmt: skip
SINGLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


@functools.cache
def _language(kind: str) -> tree_sitter.Language:
    """tree-sitter's grammar ``kind``: ``javascript``, ``typescript`` or ``tsx``."""
    if kind == "typescript":
        return tree_sitter.Language(tree_sitter_typescript.language_typescript())
    if kind == "tsx":
        return tree_sitter.Language(tree_sitter_typescript.language_tsx())
    return tree_sitter.Language(tree_sitter_javascript.language())


@functools.cache
def _query(kind: str) -> tree_sitter.Query:
    """The names that may start a block, in grammar ``kind``: a callee's (``it(``), or the
    object of a callee's chain of up to three members (``test.concurrent.each(``)."""
    names = " ".join(f'"{name}"' for name in sorted(GROUPS | TESTS | NEVER_RUN))
    name = f"(identifier) @name (#any-of? @name {names})"
    patterns = []
    for depth in range(4):
        callee = name
        for _ in range(depth):
            callee = f"(member_expression object: {callee})"
        patterns.append(f"(call_expression function: {callee})")
    return tree_sitter.Query(_language(kind), "\n".join(patterns))


def grammar(path: str) -> str:
    """The grammar a file is parsed with, by its suffix."""
    suffix = PurePosixPath(path).suffix
    if suffix in (".ts", ".mts", ".cts"):
        return "typescript"
    if suffix == ".tsx":
        return "tsx"
    return "javascript"  # its grammar reads JSX too


@dataclass(frozen=True)
class _Block:
    """A ``describe`` or test call: its title path and cases, as far as they are known."""

    path: tuple[str, ...]
    cases: int | None
    test: bool


def defined_tests(path: str, source: bytes | None) -> dict[str, int | None]:
    """The tests file ``path`` with text ``source`` defines, by title path, each with its
    number of cases (``None``: cannot be told); empty when ``source`` is ``None`` or
    holds no test."""
    if source is None:
        return {}
    kind = grammar(path)
    tree = tree_sitter.Parser(_language(kind)).parse(source)
    names = tree_sitter.QueryCursor(_query(kind)).captures(tree.root_node).get("name", [])
    blocks: dict[int, _Block | None] = {}
    tests: dict[str, int | None] = {}
    for name in sorted(names, key=lambda node: node.start_byte):
        found = _block(name, blocks)
        if found is None or not found.test:
            continue
        key = SEPARATOR.join(found.path)
        if key in tests:  # the runner runs (and reports) a title defined twice twice
            tests[key] = _plus(tests[key], found.cases)
        else:
            tests[key] = found.cases
    return tests


def _plus(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


def _times(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a * b


def _block(name: tree_sitter.Node, blocks: dict[int, _Block | None]) -> _Block | None:
    """The block whose callee starts with identifier ``name``, its enclosing blocks read
    from (and its own put in) ``blocks`` by call id; ``None``: not a block that runs."""
    base = (name.text or b"").decode()
    modifiers: list[str] = []
    node = name
    parent = node.parent
    while parent is not None and parent.type == "member_expression":
        if parent.child_by_field_name("object") != node:
            return None
        prop = parent.child_by_field_name("property")
        modifiers.append((prop.text or b"").decode() if prop else "")
        node, parent = parent, parent.parent
    if parent is None or parent.type != "call_expression":
        return None
    if parent.child_by_field_name("function") != node:
        return None
    call = parent
    cases: int | None = 1
    if modifiers and modifiers[-1] in TABLES | CONDITIONS:
        if modifiers[-1] in TABLES:
            cases = _rows(call.child_by_field_name("arguments"))
        outer = call.parent
        if outer is None or outer.child_by_field_name("function") != call:
            return None
        call = outer
    if base in NEVER_RUN or SKIPPING & set(modifiers):
        blocks[call.id] = None
        return None
    if any(m not in TABLES | CONDITIONS | MODIFIERS for m in modifiers):
        return None  # test.extend, describe.configure...: not a block
    arguments = call.child_by_field_name("arguments")
    given = arguments.named_children if arguments is not None else []
    if not given:
        return None
    first = given[0]
    if base in TESTS and len(given) == 1:
        return None  # it("later"): pending, never run
    if base in GROUPS and len(given) == 1 and _is_statement(call):
        blocks[QUNIT] = _Block((_title(first),), 1, False)  # suite("parse"); test(...)
        return blocks[QUNIT]
    enclosing, repeated = _enclosing(call, blocks)
    if enclosing is _NEVER:
        blocks[call.id] = None
        return None
    path = (*enclosing.path, _title(first)) if enclosing else (_title(first),)
    total = _times(enclosing.cases if enclosing else 1, cases)
    found = _Block(path, None if repeated else total, base in TESTS)
    blocks[call.id] = found
    return found


_NEVER = _Block((), 0, False)
"""What :func:`_enclosing` gives for a block inside one that never runs."""
QUNIT = -1
"""The key in ``blocks`` of the last top-level group without a callback (Mocha's QUnit
interface): the blocks after it at the top level are in it."""


def _is_statement(call: tree_sitter.Node) -> bool:
    """Whether ``call`` is a statement of the file's top level."""
    statement = call.parent
    return (
        statement is not None
        and statement.type == "expression_statement"
        and statement.parent is not None
        and statement.parent.type == "program"
    )


def _enclosing(
    call: tree_sitter.Node, blocks: dict[int, _Block | None]
) -> tuple[_Block | None, bool]:
    """The group ``call`` is in (:data:`_NEVER` when that never runs), and whether it is
    inside a loop or a callback that may run it any number of times."""
    repeated = False
    node = call.parent
    while node is not None:
        if node.type in LOOPS:
            repeated = True
        elif node.type == "call_expression":
            if node.id in blocks:
                group = blocks[node.id]
                if group is None:
                    return _NEVER, repeated
                return group, repeated
            repeated = True
        node = node.parent
    return blocks.get(QUNIT), repeated


def _rows(table: tree_sitter.Node | None) -> int | None:
    """The rows of an ``.each`` table: an array literal's elements, or a tagged
    template's rows (its substitutions over its headings); ``None``: not a literal."""
    if table is None:
        return None
    if table.type == "template_string":
        return _tagged_rows(table)
    values = table.named_children
    if len(values) != 1 or values[0].type != "array":
        return None
    elements = [child for child in values[0].named_children if child.type != "comment"]
    if any(child.type == "spread_element" for child in elements):
        return None
    return len(elements)


def _tagged_rows(table: tree_sitter.Node) -> int | None:
    """The rows of a tagged table (``a | b`` then ``${1} | ${2}`` per row)."""
    substitutions = [c for c in table.named_children if c.type == "template_substitution"]
    text = (table.text or b"").decode().strip("`").strip()
    heading = text.split("\n", 1)[0]
    if "${" in heading:
        return None
    columns = len([cell for cell in heading.split("|") if cell.strip()])
    if not columns or len(substitutions) % columns:
        return None
    return len(substitutions) // columns


def _title(node: tree_sitter.Node) -> str:
    """A title as the runner prints it: a literal's text, else the expression's source."""
    if node.type in ("string", "template_string") and not any(
        child.type == "template_substitution" for child in node.named_children
    ):
        return "".join(_literal(child) for child in node.named_children)
    text = (node.text or b"").decode(errors="replace")
    return text[1:-1] if node.type == "template_string" else text


def _literal(part: tree_sitter.Node) -> str:
    """A piece of a string literal's text, its escape sequences read."""
    text = (part.text or b"").decode(errors="replace")
    if part.type != "escape_sequence":
        return text
    body = text[1:]
    if body.startswith("u{"):
        return chr(int(body[2:-1], 16))
    if body.startswith(("u", "x")) and len(body) > 1:
        return chr(int(body[1:], 16))
    if body.startswith(("\n", "\r")):
        return ""  # a line continuation
    return SINGLE_ESCAPES.get(body, body)
