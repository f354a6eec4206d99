"""The names pytest collects as tests in a project, so that every canary is collected.

pytest takes a module whose file name matches one of ``python_files`` (globs), a
function (or a method) whose name matches one of ``python_functions`` and a class whose
name matches one of ``python_classes``: a pattern of those two matches a name that
starts with it, or, when it holds ``*``, ``?`` or ``[``, one that it matches as a glob.
The defaults are ``test_*.py`` and ``*_test.py``, ``test`` and ``Test``. A project that
sets them otherwise (``python_functions = check_*``) would collect no canary named
``test_...``, and every run would read as tampered: canaries and twins are named by
:class:`Naming`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Sequence
from dataclasses import dataclass

GLOB = ("*", "?", "[")


@dataclass(frozen=True)
class Naming:
    """A project's ``python_files``, ``python_functions`` and ``python_classes``."""

    files: tuple[str, ...] = ("test_*.py", "*_test.py")
    functions: tuple[str, ...] = ("test",)
    classes: tuple[str, ...] = ("Test",)

    def module(self, word: str) -> str:
        """A test module's file name with ``word`` in it that pytest collects
        (``test_<word>.py`` unless the project's names leave it out)."""
        return _made(self.files, word, f"test_{word}.py", self.is_module, glob_only=True)

    def is_function(self, name: str) -> bool:
        """Whether pytest collects a function named ``name``."""
        return _matches(self.functions, name)

    def is_class(self, name: str) -> bool:
        """Whether pytest collects a class named ``name``."""
        return _matches(self.classes, name)

    def function(self, word: str) -> str:
        """A test function's name with ``word`` in it that pytest collects
        (``test_<word>`` unless the project's names leave it out)."""
        return _made(self.functions, word, f"test_{word}", self.is_function)

    def test_class(self, word: str) -> str:
        """A test class's name with ``word`` in it that pytest collects (``Test<Word>``
        unless the project's names leave it out)."""
        capital = word[:1].upper() + word[1:]
        return _made(self.classes, capital, f"Test{capital}", self.is_class)

    def is_module(self, name: str) -> bool:
        """Whether pytest collects a module whose file is named ``name`` in a folder."""
        return name.endswith(".py") and any(fnmatch.fnmatch(name, p) for p in self.files)


def naming(
    files: Sequence[str] | None, functions: Sequence[str] | None, classes: Sequence[str] | None
) -> Naming:
    """The :class:`Naming` of a project whose configuration sets ``files``, ``functions``
    and ``classes`` (``None``: not set, pytest's default)."""
    default = Naming()
    return Naming(
        files=tuple(files) if files else default.files,
        functions=tuple(functions) if functions else default.functions,
        classes=tuple(classes) if classes else default.classes,
    )


def _matches(patterns: tuple[str, ...], name: str) -> bool:
    return any(
        name.startswith(pattern)
        or (any(mark in pattern for mark in GLOB) and fnmatch.fnmatch(name, pattern))
        for pattern in patterns
    )


def _made(
    patterns: tuple[str, ...],
    word: str,
    usual: str,
    collected: Callable[[str], bool],
    *,
    glob_only: bool = False,
) -> str:
    """``usual`` when pytest collects it, else a name made from the first pattern that
    gives one pytest collects (an identifier, or a module's file name); ``usual`` when
    none does. A pattern is a glob, or (unless ``glob_only``) a prefix."""
    candidates = [usual]
    for pattern in patterns:
        if "[" in pattern or "/" in pattern:
            continue
        if "*" in pattern or "?" in pattern:
            candidates.append(pattern.replace("*", word, 1).replace("*", "").replace("?", "x"))
        elif not glob_only:
            joint = "" if pattern.endswith("_") or word[:1].isupper() else "_"
            candidates.append(f"{pattern}{joint}{word}")
    for name in candidates:
        if name.removesuffix(".py").isidentifier() and collected(name):
            return name
    return usual
