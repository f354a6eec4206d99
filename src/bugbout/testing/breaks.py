"""One-function patches that break behaviour, to check a selection of tests on a real
suite: every test that fails with such a patch must be among those selected for it."""

from __future__ import annotations

import ast

from bugbout.core.crossexam.function_spans import first_line

HOW = ("raise", "return")
"""How a function is broken: it raises, or returns ``None``, before its first statement."""


def breakable(text: str) -> dict[str, int]:
    """The functions of module ``text`` (``name`` or ``Class.name``, not nested in another
    function) whose first statement is on a line of its own, after the docstring: where a
    line can be put before it; each with its first line (``co_firstlineno``). Of several
    of one name (overloads), the last."""
    found: dict[str, int] = {}
    for node in ast.parse(text).body:
        methods = node.body if isinstance(node, ast.ClassDef) else [node]
        prefix = f"{node.name}." if isinstance(node, ast.ClassDef) else ""
        for function in methods:
            if isinstance(function, ast.FunctionDef):
                found.pop(prefix + function.name, None)
                if _first(function) is not None:
                    found[prefix + function.name] = first_line(function)
    return found


def broken(text: str, name: str, how: str) -> str:
    """``text`` with function ``name`` (``Class.method``) broken ``how`` (:data:`HOW`)."""
    parent: ast.AST = ast.parse(text)
    for part in name.split("."):
        parent = [  # the last of that name: the implementation, after its overloads
            node
            for node in ast.iter_child_nodes(parent)
            if isinstance(node, ast.ClassDef | ast.FunctionDef) and node.name == part
        ][-1]
    assert isinstance(parent, ast.FunctionDef)
    first = _first(parent)
    if first is None:
        raise ValueError(f"{name} has no statement on a line of its own")
    lines = text.splitlines(keepends=True)
    statement = "raise RuntimeError('broken')" if how == "raise" else "return None"
    lines.insert(first.lineno - 1, " " * first.col_offset + statement + "\n")
    return "".join(lines)


def _first(function: ast.FunctionDef) -> ast.stmt | None:
    body = function.body[1:] if ast.get_docstring(function) is not None else function.body
    ends = (getattr(n, "end_lineno", 0) or 0 for n in ast.walk(function.args))
    header = max([function.lineno, *ends])
    if function.returns is not None:
        header = max(header, function.returns.end_lineno or 0)
    if not body or body[0].lineno <= header or function.body[0].lineno <= header:
        return None
    return body[0]
