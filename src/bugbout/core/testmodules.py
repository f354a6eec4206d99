"""Finding the tests a module defines by parsing it, never by grepping a diff."""

from __future__ import annotations

import ast
import fnmatch
from pathlib import PurePosixPath

TEST_MODULE_PATTERNS = ("test_*.py", "*_test.py")


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


def _collect(body: list[ast.stmt], prefix: str, tests: dict[str, int | None]) -> None:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name.startswith("test"):
                tests[prefix + node.name] = _cases(node.decorator_list)
        elif isinstance(node, ast.ClassDef) and _is_test_class(node):
            _collect(node.body, f"{prefix}{node.name}::", tests)


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
