"""Strings a module builds at run time from constants, folded back into what they say.

``getattr(sys, "mod" + "ules")`` reads as ``sys.modules`` once folded. :class:`Folder`
evaluates, without running anything, the expressions that build a string from
constants: ``+`` and ``*``, f-strings, ``"".join([...])`` and ``str.join``, ``chr(115)``,
a slice (``"seludom"[::-1]``), ``bytes.decode()``, ``str.lower()`` and ``upper()``, and
names bound once in the module to such an expression. Anything else is unknown.
"""

from __future__ import annotations

import ast
from collections import Counter

LIMIT = 1000
"""The longest string folded (longer ones are not names)."""


class Folder:
    """Folds a module's expressions; knows the names it binds once to a folded value."""

    def __init__(self, module: ast.Module) -> None:
        self.names: dict[str, ast.expr] = {}
        bound = Counter(
            target.id
            for node in ast.walk(module)
            if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.For)
            for target in _targets(node)
            if isinstance(target, ast.Name)
        )
        for node in ast.walk(module):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name) and bound[target.id] == 1:
                    self.names[target.id] = node.value
        self.depth = 0

    def fold(self, node: ast.AST) -> str | None:
        """The string ``node`` always evaluates to, or ``None`` when it is not known."""
        value = self._value(node)
        if isinstance(value, bytes):
            return None
        return value

    def built(self, node: ast.AST) -> str | None:
        """The string ``node`` builds when it is more than a constant or a name (what a
        name assembled at run time says); ``None`` otherwise."""
        if isinstance(node, ast.Constant | ast.Name) or not isinstance(node, ast.expr):
            return None
        if isinstance(node, ast.JoinedStr | ast.BinOp | ast.Call | ast.Subscript):
            return self.fold(node)
        return None

    def _value(self, node: ast.AST) -> str | bytes | None:
        self.depth += 1
        try:
            if self.depth > 50:
                return None
            value = self._evaluate(node)
        finally:
            self.depth -= 1
        if isinstance(value, str | bytes) and len(value) <= LIMIT:
            return value
        return None

    def _evaluate(self, node: ast.AST) -> str | bytes | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
            return node.value
        if isinstance(node, ast.Name) and node.id in self.names:
            return self._value(self.names[node.id])
        if isinstance(node, ast.BinOp):
            return self._binary(node)
        if isinstance(node, ast.JoinedStr):
            parts = [
                self._value(v.value if isinstance(v, ast.FormattedValue) else v)
                for v in node.values
            ]
            return "".join(p for p in parts if isinstance(p, str)) if _all_str(parts) else None
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            return self._sliced(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        return None

    def _binary(self, node: ast.BinOp) -> str | bytes | None:
        left = self._value(node.left)
        if isinstance(node.op, ast.Add):
            right = self._value(node.right)
            if isinstance(left, str) and isinstance(right, str):
                return left + right
            if isinstance(left, bytes) and isinstance(right, bytes):
                return left + right
        if isinstance(node.op, ast.Mult) and isinstance(left, str):
            count = node.right
            if isinstance(count, ast.Constant) and isinstance(count.value, int):
                return left * min(count.value, LIMIT) if 0 <= count.value <= LIMIT else None
        return None

    def _sliced(self, node: ast.Subscript) -> str | bytes | None:
        value = self._value(node.value)
        bounds = node.slice
        assert isinstance(bounds, ast.Slice)
        numbers = [_integer(b) if b is not None else None for b in (bounds.lower, bounds.upper)]
        step = _integer(bounds.step) if bounds.step is not None else None
        if value is None or (bounds.step is not None and step in (None, 0)):
            return None
        if any(
            b is not None and n is None
            for b, n in zip((bounds.lower, bounds.upper), numbers, strict=True)
        ):
            return None
        return value[numbers[0] : numbers[1] : step]

    def _call(self, node: ast.Call) -> str | bytes | None:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "chr" and len(node.args) == 1:
            code = _integer(node.args[0])
            return chr(code) if code is not None and 0 <= code < 0x110000 else None
        if not isinstance(func, ast.Attribute):
            return None
        if func.attr == "join" and len(node.args) == 1:
            return self._joined(func.value, node.args[0])
        receiver = self._value(func.value)
        if func.attr == "decode" and isinstance(receiver, bytes):
            try:
                return receiver.decode()
            except UnicodeDecodeError:
                return None
        if func.attr == "encode" and isinstance(receiver, str):
            return receiver.encode()
        if func.attr in ("lower", "upper", "strip") and isinstance(receiver, str) and not node.args:
            return getattr(receiver, func.attr)()  # type: ignore[no-any-return]
        return None

    def _joined(self, separator: ast.expr, items: ast.expr) -> str | None:
        if isinstance(separator, ast.Name) and separator.id == "str":
            return None  # str.join(sep, items): not folded
        glue = self._value(separator)
        if not isinstance(glue, str) or not isinstance(items, ast.List | ast.Tuple):
            return None
        parts = [self._value(item) for item in items.elts]
        return glue.join(p for p in parts if isinstance(p, str)) if _all_str(parts) else None


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return [t for target in node.targets for t in _flat(target)]
    if isinstance(node, ast.AugAssign | ast.AnnAssign | ast.For):
        return _flat(node.target)
    return []


def _flat(target: ast.expr) -> list[ast.expr]:
    if isinstance(target, ast.Tuple | ast.List):
        return [t for element in target.elts for t in _flat(element)]
    return [target]


def _all_str(parts: list[str | bytes | None]) -> bool:
    return all(isinstance(part, str) for part in parts)


def _integer(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _integer(node.operand)
        return -inner if inner is not None else None
    return None
