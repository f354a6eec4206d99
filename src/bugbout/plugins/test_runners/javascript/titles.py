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
import itertools
import math
from dataclasses import dataclass
from pathlib import PurePosixPath

import tree_sitter
import tree_sitter_javascript
import tree_sitter_typescript

from bugbout.plugins.test_runners.javascript import files

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
MOST_PASSES = 1000
"""The most passes of the loops around a test that are told apart by their values."""
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
class _Loop:
    """A loop over a literal list a block is in: its variable and the values it takes."""

    name: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class _Block:
    """A ``describe`` or test call: the titles of its path, the loops over literal lists
    around them, and its cases, as far as they are known."""

    titles: tuple[tree_sitter.Node, ...]
    loops: tuple[_Loop, ...]
    cases: int | None
    test: bool


def defined_tests(path: str, source: bytes | None) -> dict[str, int | None]:
    """The tests file ``path`` with text ``source`` defines, by title path, each with its
    number of cases (``None``: cannot be told); empty when ``source`` is ``None`` or
    holds no test."""
    if source is None or files.is_type_test(path):
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
        for key in _keys(found):
            if key in tests:  # the runner runs (and reports) a title defined twice twice
                tests[key] = _plus(tests[key], found.cases)
            else:
                tests[key] = found.cases
    return tests


def _keys(test: _Block) -> list[str]:
    """The title paths of ``test``, one for each pass of the loops around it (at most
    :data:`MOST_PASSES`; past them, or when a title cannot be read, its source text)."""
    passes = math.prod(len(loop.values) for loop in test.loops)
    if passes > MOST_PASSES:
        return [SEPARATOR.join(_title(title, {}) for title in test.titles)]
    keys = []
    for values in itertools.product(*(loop.values for loop in test.loops)):
        bound = {loop.name: value for loop, value in zip(test.loops, values, strict=True)}
        keys.append(SEPARATOR.join(_title(title, bound) for title in test.titles))
    return keys


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
        blocks[QUNIT] = _Block((first,), (), 1, False)  # suite("parse"); test(...)
        return blocks[QUNIT]
    enclosing, loops, repeated = _enclosing(call, blocks)
    if enclosing is _NEVER:
        blocks[call.id] = None
        return None
    around = enclosing or _Block((), (), 1, False)
    found = _Block(
        (*around.titles, first),
        (*around.loops, *loops),
        None if repeated else _times(around.cases, cases),
        base in TESTS,
    )
    blocks[call.id] = found
    return found


_NEVER = _Block((), (), 0, False)
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
) -> tuple[_Block | None, list[_Loop], bool]:
    """The group ``call`` is in (:data:`_NEVER` when that never runs), the loops over
    literal lists between them (outermost first), and whether it is also inside a loop
    or a callback that may run it any number of times."""
    loops: list[_Loop] = []
    repeated = False
    node = call.parent
    while node is not None:
        if node.id in blocks:
            group = blocks[node.id]
            return (_NEVER if group is None else group), loops[::-1], repeated
        if node.type in LOOPS or node.type == "call_expression":
            loop = _loop(node)
            if loop is None:
                repeated = True
            else:
                loops.append(loop)
        node = node.parent
    return blocks.get(QUNIT), loops[::-1], repeated


def _loop(node: tree_sitter.Node) -> _Loop | None:
    """``node`` as a loop over a literal list: ``for (const x of ["a", "b"])`` or
    ``["a", "b"].forEach((x) => ...)`` (or ``.map``); ``None``: another loop or call."""
    if node.type == "for_in_statement":
        operator = node.child_by_field_name("operator")
        if operator is None or operator.type != "of":
            return None
        variable, values = node.child_by_field_name("left"), node.child_by_field_name("right")
    elif node.type == "call_expression":
        callee = node.child_by_field_name("function")
        if callee is None or callee.type != "member_expression":
            return None
        method = callee.child_by_field_name("property")
        if method is None or method.text not in (b"forEach", b"map"):
            return None
        values = callee.child_by_field_name("object")
        arguments = node.child_by_field_name("arguments")
        given = arguments.named_children if arguments is not None else []
        variable = _first_parameter(given[0]) if given else None
    else:
        return None
    if variable is None or variable.type != "identifier" or values is None:
        return None
    if values.type != "array":
        return None
    texts = [_value(element) for element in values.named_children]
    if any(text is None for text in texts):
        return None
    return _Loop((variable.text or b"").decode(), tuple(text for text in texts if text is not None))


def _first_parameter(function: tree_sitter.Node) -> tree_sitter.Node | None:
    """The first parameter of a function or arrow function ``function``."""
    if function.type not in ("arrow_function", "function_expression"):
        return None
    single = function.child_by_field_name("parameter")
    if single is not None:
        return single
    parameters = function.child_by_field_name("parameters")
    named = parameters.named_children if parameters is not None else []
    return named[0] if named else None


def _value(element: tree_sitter.Node) -> str | None:
    """A literal element's text as JavaScript turns it into a string: a string's, a
    whole number's; ``None`` for anything else."""
    if element.type == "string":
        return _title(element, {})
    text = (element.text or b"").decode()
    if element.type == "number" and text.isdigit() and (text == "0" or text[0] != "0"):
        return text
    return None


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


def _title(node: tree_sitter.Node, bound: dict[str, str]) -> str:
    """A title as the runner prints it, the ``bound`` variables of the loops around it
    given their values: a literal's text, else the expression's source."""
    if node.type == "identifier" and node.text is not None and node.text.decode() in bound:
        return bound[node.text.decode()]
    if node.type in ("string", "template_string"):
        parts = [_literal(part, bound) for part in node.named_children]
        if all(part is not None for part in parts):
            return "".join(part for part in parts if part is not None)
    text = (node.text or b"").decode(errors="replace")
    return text[1:-1] if node.type == "template_string" else text


def _literal(part: tree_sitter.Node, bound: dict[str, str] | None = None) -> str | None:
    """A piece of a string or template literal's text, its escape sequences read and a
    substitution of a ``bound`` variable its value; ``None``: another substitution."""
    text = (part.text or b"").decode(errors="replace")
    if part.type == "template_substitution":
        inner = part.named_children
        name = inner[0].text.decode() if len(inner) == 1 and inner[0].text else ""
        if bound is None or inner[0].type != "identifier" or name not in bound:
            return None
        return bound[name]
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
