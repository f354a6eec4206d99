"""Reading a ``setup.py`` without running it: the values of ``setup()``'s keywords, parsed
with :mod:`ast`.

What is evaluated is what is safe to: string, list and dict literals, module-level names
bound to them, ``dict(...)`` calls, lists joined with ``+`` and entries of a module-level
dict, including the ones set later (``EXTRAS["dev"] = EXTRAS["tests"] + ["tox"]``, as
attrs writes them). Anything else (a call, a comprehension, a file read) is not a
literal and is left out: the project's code is never run."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from pathlib import Path

# -- -------------------------------------------------------------


def setup_py_value(path: Path, keyword: str) -> list[str] | str | None:
    """A literal ``setup(keyword=...)`` value from ``setup.py``; ``None`` if not literal."""
    parsed = _parse_setup_py(path)
    if parsed is None:
        return None
    source, module = parsed
    if module is None:
        return _setup_py_value_by_text(source, keyword)
    names = _module_assignments(module)
    node = _setup_argument(module, names, keyword)
    return None if node is None else _literal(node, names)


def setup_py_extras(path: Path) -> dict[str, list[str]]:
    """The literal ``setup(extras_require={...})`` of ``setup.py``, extra by extra."""
    parsed = _parse_setup_py(path)
    if parsed is None:
        return {}
    source, module = parsed
    names: dict[str, ast.expr] = {}
    if module is None:
        node = _setup_py_expression_by_text(source, "extras_require")
    else:
        names = _module_assignments(module)
        node = _setup_argument(module, names, "extras_require")
    extras: dict[str, list[str]] = {}
    for key, value in (_literal_mapping(node, names) if node is not None else {}).items():
        literal = _literal(value, names)
        lines = literal.splitlines() if isinstance(literal, str) else literal
        if lines is not None:
            extras[key] = [
                line.strip() for line in lines if line.strip() and not line.strip().startswith("#")
            ]
    return extras


def setup_py_setting(path: Path, keyword: str) -> bool | list[str] | str | None:
    """The literal value ``setup.py`` gives ``keyword`` anywhere: a keyword argument of any
    call (``setup(use_2to3=True)``, ``dict(...)``), a dict entry, or an item set
    (``kwargs["use_2to3"] = True``, as code run only on Python 3 writes it); ``None`` when
    it gives none or not a literal."""
    parsed = _parse_setup_py(path)
    if parsed is None:
        return None
    source, module = parsed
    if module is None:
        return _setting_by_text(source, keyword)
    names = _module_assignments(module)
    for node in ast.walk(module):
        found: ast.expr | None = None
        if isinstance(node, ast.Call):
            found = next((k.value for k in node.keywords if k.arg == keyword), None)
        elif isinstance(node, ast.Dict):
            found = _literal_mapping(node, names).get(keyword)
        elif isinstance(node, ast.Assign) and any(
            (_entry(target) or ("", ""))[1] == keyword for target in node.targets
        ):
            found = node.value
        if found is not None:
            return _setting(found, names)
    return None


def setup_py_uses(path: Path, name: str) -> bool:
    """Whether ``setup.py`` imports or refers to ``name`` (``build_py_2to3``), read by
    its syntax tree, or by words where Python 3 cannot parse it."""
    parsed = _parse_setup_py(path)
    if parsed is None:
        return False
    source, module = parsed
    if module is None:
        return re.search(rf"\b{re.escape(name)}\b", source) is not None
    for node in ast.walk(module):
        if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
            return True
        if (isinstance(node, ast.Name) and node.id == name) or (
            isinstance(node, ast.Attribute) and node.attr == name
        ):
            return True
    return False


def _setting(node: ast.expr, names: Mapping[str, ast.expr]) -> bool | list[str] | str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return node.value
    return _literal(node, names)


def _setting_by_text(source: str, keyword: str) -> bool | list[str] | str | None:
    """For a ``setup.py`` Python 3 cannot parse: ``keyword`` set to a literal, by text."""
    pattern = rf"\b{keyword}\b['\"]?\]?\s*[=:]\s*(True|False|\[[^\]]*\]|\([^)]*\))"
    match = re.search(pattern, source)
    if not match:
        return None
    try:
        return _setting(ast.parse(match.group(1), mode="eval").body, {})
    except (SyntaxError, ValueError):
        return None


def _parse_setup_py(path: Path) -> tuple[str, ast.Module | None] | None:
    """``setup.py``'s source and its syntax tree (``None`` if Python 3 cannot parse it)."""
    try:
        source = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    try:
        return source, ast.parse(source)
    except (SyntaxError, ValueError):
        return source, None


def _setup_argument(
    module: ast.Module, names: Mapping[str, ast.expr], keyword: str
) -> ast.expr | None:
    """The expression passed as ``keyword`` to ``setup()``, directly or in ``**kwargs``."""
    for node in ast.walk(module):
        if not (isinstance(node, ast.Call) and _callee_name(node.func) == "setup"):
            continue
        for argument in node.keywords:
            if argument.arg == keyword:
                return argument.value
            if argument.arg is None:  # setup(**kwargs)
                mapping = _literal_mapping(argument.value, names)
                if keyword in mapping:
                    return mapping[keyword]
    return None


def _setup_py_expression_by_text(source: str, keyword: str) -> ast.expr | None:
    """For a Python 2 ``setup.py``: the bracketed expression after ``keyword=``, parsed."""
    match = re.search(rf"\b{keyword}\s*=\s*(dict\s*\(|[{{\[(])", source)
    if not match:
        return None
    start = match.start(1)
    depth, quote, index = 0, "", start
    while index < len(source):
        char = source[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#":
            index = source.find("\n", index)
            if index < 0:
                return None
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                try:
                    return ast.parse(source[start : index + 1], mode="eval").body
                except (SyntaxError, ValueError):
                    return None
        index += 1
    return None


def _setup_py_value_by_text(source: str, keyword: str) -> list[str] | str | None:
    """For a ``setup.py`` Python 3 cannot parse (Python 2 code): find a literal by text."""
    pattern = rf"\b{keyword}\s*=\s*(\[[^\]]*\]|\([^)]*\)|'[^'\n]*'|\"[^\"\n]*\")"
    match = re.search(pattern, source)
    if not match:
        return None
    try:
        return _literal(ast.parse(match.group(1), mode="eval").body, {})
    except (SyntaxError, ValueError):
        return None


def _callee_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _module_assignments(module: ast.Module) -> dict[str, ast.expr]:
    """Module-level names bound to an expression; ``NAME["key"] = value`` is kept under
    ``NAME["key"]``, so a dict's later entries count."""
    names: dict[str, ast.expr] = {}
    for node in module.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = node.value
                elif (entry := _entry(target)) is not None:
                    names[_entry_name(*entry)] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            names[node.target.id] = node.value
    return names


def _entry(node: ast.expr) -> tuple[str, str] | None:
    """``NAME["key"]`` as ``(NAME, key)``; ``None`` for anything else."""
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, str)
    ):
        return node.value.id, node.slice.value
    return None


def _entry_name(name: str, key: str) -> str:
    """How a dict's entry set after it is kept among the module's names: ``NAME['key']``
    (a key holding a quote is not metadata anyone writes)."""
    return f"{name}['{key}']"


def _literal(
    node: ast.expr, names: Mapping[str, ast.expr], depth: int = 0
) -> list[str] | str | None:
    if depth > 20:  # a name bound to itself, or a chain too long to be metadata
        return None
    if isinstance(node, ast.Name) and node.id in names:
        node = names[node.id]
    if isinstance(node, ast.Subscript) and (entry := _entry(node)) is not None:
        found = _literal_mapping(node.value, names).get(entry[1])
        if found is None:
            return None
        node = found
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left, names, depth + 1), _literal(node.right, names, depth + 1)
        if isinstance(left, list) and isinstance(right, list):
            return left + right
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.List | ast.Tuple):
        values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
        if len(values) == len(node.elts) and all(isinstance(v, str) for v in values):
            return [str(v) for v in values]
    return None


def _literal_mapping(node: ast.expr, names: Mapping[str, ast.expr]) -> dict[str, ast.expr]:
    later: dict[str, ast.expr] = {}
    if isinstance(node, ast.Name) and node.id in names:
        later = {
            stored[len(node.id) + 2 : -2]: value
            for stored, value in names.items()
            if stored.startswith(f"{node.id}[") and stored != node.id
        }
        node = names[node.id]
    found: dict[str, ast.expr] = {}
    if isinstance(node, ast.Dict):
        found = {
            key.value: value
            for key, value in zip(node.keys, node.values, strict=True)
            if isinstance(key, ast.Constant) and isinstance(key.value, str)
        }
    elif isinstance(node, ast.Call) and _callee_name(node.func) == "dict":
        found = {kw.arg: kw.value for kw in node.keywords if kw.arg}
    return {**found, **later}
