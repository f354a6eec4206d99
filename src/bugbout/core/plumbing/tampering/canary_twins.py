"""Canaries inside the test files a run targets, named after their neighbours.

A canary module of its own is told apart by its file: a cheat that fakes only the tests
of the project's own files, or of names that speak of the issue, passes the canaries by.
So every run of a tree an agent may have touched also writes, into up to ``HOSTS`` of
the test files it targets (those bugbout wrote first: the hidden tests, an examiner's),
must-fail tests modelled on the tests beside them: each twin's name is a neighbour's with
a word of the file put in (``test_even`` gives ``test_even_middle`` or
``test_middle_even``), the neighbours the tree changed (the hidden tests, for a score)
taken first, and one more with the first neighbour's very name, in a class named after a
word of the file (``TestMiddle::test_even``: a cheat that matches the end of a node id,
or a test's name, passes it too). Each is written on a blank line between two top-level
statements, at random, so that no line of the file moves (or, when there is none, at its
end). A cheat that fakes the hidden tests by file, by a word of their names or by
position fakes a twin too, and gives itself away.
After the file's end go up to ``BODIES`` body twins: copies of its tests, the ones the
tree added first, that must fail (:mod:`~bugbout.core.plumbing.tampering.body_twins`).
"""

from __future__ import annotations

import ast
import functools
import itertools
import os
import re
import secrets
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from bugbout.core.plumbing.confinement.untrusted import UntrustedFileError, read_untrusted_bytes
from bugbout.core.plumbing.tampering.body_twins import (
    BODIES,
    Test,
    body_twin,
    copyable,
    is_case,
    name_of,
    ordered,
    tests,
    unittest_name,
)
from bugbout.core.plumbing.tampering.naming import Naming

HOSTS = 2
"""Test files that get twins, at most, per run."""
TWINS = 1
"""Twins per host file named after a neighbour, at most (and one more, in a class, with
the first neighbour's very name)."""
READ_LIMIT = 2_000_000
"""A larger test file hosts no twins."""
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
CALLED = re.compile(r"(?<![A-Za-z_])([A-Za-z_][A-Za-z0-9_]*)\s*\(")
"""A name called: tried only where a name can start (a letter or ``_`` before it is
inside the name, whose start matched the same call), which halves a file's scan."""
DEFINED = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(test[A-Za-z0-9_]*)", re.MULTILINE)
SCAN_LIMIT = 2000
"""Test files looked at, at most, under one directory the run targets."""
PARSED = 4
"""Test files kept parsed (a run plants into at most ``HOSTS``)."""


@dataclass(frozen=True)
class Hosted:
    """Twins written into one test file: the file, its bytes before, the twins' node ids
    (its body twins' among them)."""

    module: str
    original: bytes
    nodeids: tuple[str, ...]
    bodies: tuple[str, ...] = ()


def _candidates(
    tree: Path, lower: Path | None, targets: list[str], naming: Naming
) -> Iterator[list[str]]:
    """The test files the targets name or hold (relative paths), in two tiers: those
    bugbout's edits wrote (the hidden tests, an examiner's), then the others, looked for
    only once the first is used up."""
    edited: list[str] = []
    directories: list[PurePosixPath] = []
    for target in targets:
        path = PurePosixPath(target.split("::", 1)[0])
        if path.is_absolute() or ".." in path.parts:
            continue
        if path.suffix == ".py":
            edited.append(str(path))
            continue
        directories.append(path)
        if lower is not None:
            found = _test_files(tree, path, naming)
            edited += [m for m in found if _changed(tree / m, lower / m)]
    first = list(dict.fromkeys(edited))
    yield list(first)  # the caller takes its files out of it
    root = lower if lower is not None else tree
    others = [m for path in directories for m in _test_files(root, path, naming)]
    yield [module for module in dict.fromkeys(others) if module not in first]


def _changed(path: Path, before: Path) -> bool:
    """Whether ``path`` differs from ``before`` (or ``before`` does not exist)."""
    try:
        if path.stat().st_size != before.stat().st_size:
            return True
    except OSError:
        return True
    return read_regular(path) != read_regular(before)


def _test_files(root: Path, directory: PurePosixPath, naming: Naming) -> list[str]:
    """Up to ``SCAN_LIMIT`` test modules under ``root/directory`` (links not followed)."""
    found: list[str] = []
    for folder, directories, files in os.walk(root / directory):
        directories[:] = sorted(d for d in directories if not d.startswith((".", "__")))
        for name in sorted(files):
            if naming.is_module(name):
                found.append(str(PurePosixPath(Path(folder, name).relative_to(root).as_posix())))
        if len(found) >= SCAN_LIMIT:
            break
    return found


def _regular(tree: Path, module: str) -> bool:
    """Whether ``module`` is a regular file in ``tree``, reached through no symlink."""
    parts = PurePosixPath(module).parts
    if any((tree / PurePosixPath(*parts[:n])).is_symlink() for n in range(1, len(parts) + 1)):
        return False
    return (tree / module).is_file()


def plant_twins(
    tree: Path,
    lower: Path | None,
    targets: list[str],
    expose: Callable[[str], None],
    naming: Naming | None = None,
) -> list[Hosted]:
    """Write must-fail twins and body twins into up to ``HOSTS`` of the targets' test files
    in ``tree`` (``expose(module)`` makes one editable there first), named as the
    project's ``naming`` collects; ``lower`` is the tree before bugbout's edits, whose
    tests are not the hidden ones (``naming``: pytest's default names when ``None``)."""
    naming = naming or Naming()
    planted: list[Hosted] = []
    for candidates in _candidates(tree, lower, targets, naming):
        while candidates and len(planted) < HOSTS:
            module = candidates.pop(secrets.randbelow(len(candidates)))
            expose(module)
            if not _regular(tree, module):
                continue
            before = lower / module if lower is not None else None
            hosted = _plant(tree / module, before, module, naming)
            if hosted is not None:
                planted.append(hosted)
        if len(planted) == HOSTS:
            break
    return planted


def restore(tree: Path, planted: list[Hosted]) -> None:
    """Put every host file back as it was."""
    for hosted in planted:
        (tree / hosted.module).write_bytes(hosted.original)


def read_regular(path: Path) -> bytes | None:
    """A regular file's bytes, opened without following a link; ``None`` when it is not
    one, or is over ``READ_LIMIT``."""
    try:
        return read_untrusted_bytes(path, limit=READ_LIMIT)
    except UntrustedFileError:
        return None


def _plant(path: Path, before: Path | None, module: str, naming: Naming) -> Hosted | None:
    original = read_regular(path)
    if original is None:
        return None
    try:
        text = original.decode("utf-8")
        parsed = _parsed(text, naming)
    except (UnicodeDecodeError, SyntaxError, ValueError):
        return None  # it cannot be collected: no test of it runs
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(newline)
    old = _old_names(before)
    models = _models(parsed.names, old)
    words = parsed.words
    blank = list(parsed.blank)
    taken = set(parsed.taken)
    written: list[tuple[str, str]] = []
    if parsed.marked is not None:
        arguments = ", ".join(parsed.marked)
        for model in models or [""]:
            name = _twin_name(model, words, taken, naming.is_function, naming.function)
            taken.add(name)
            written.append((f"{module}::{name}", f"def {name}({arguments}): assert {_false()}"))
        if models:  # the first model's own name, in a class of its own
            holder = _class_name(words, taken, naming)
            taken.add(holder)
            throw = f"(_ for _ in ()).throw(AssertionError({f'assert {_false()}'!r}))"
            method = ", ".join(["self", *parsed.marked])
            line = f"class {holder}: {models[0]} = lambda {method}: {throw}"
            written.append((f"{module}::{holder}::{models[0]}", line))
    for _, line in written:
        if blank:
            lines[blank.pop(secrets.randbelow(len(blank)))] = line
        else:
            if lines and lines[-1] == "":
                lines.pop()
            lines += ["", "", line, ""]
    copies = _bodies(parsed.tests, text.split(newline), old, words, taken, naming=naming)
    if copies:
        if lines and lines[-1] == "":
            lines.pop()
        for _, body in copies:
            lines += ["", "", *body]
        lines.append("")
    twins = [nodeid for nodeid, _ in written] + [f"{module}::{end}" for end, _ in copies]
    path.write_bytes(newline.join(lines).encode("utf-8"))
    return Hosted(module, original, tuple(twins), tuple(twins[len(written) :]))


@dataclass(frozen=True)
class _Parsed:
    """What planting reads of one text of a test file; none of it is drawn at random."""

    names: tuple[str, ...]
    """Its test functions and methods, in order."""
    words: tuple[str, ...]
    """The words twins' names are made of (:func:`_words`)."""
    taken: frozenset[str]
    """Every identifier in it: no twin takes one."""
    blank: tuple[int, ...]
    """The blank lines a twin may be written on (:func:`_blank_boundaries`)."""
    tests: tuple[Test, ...]
    """The tests a body twin may copy
    (:func:`~bugbout.core.plumbing.tampering.body_twins.tests`)."""
    marked: tuple[str, ...] | None
    """The arguments the module's own ``pytestmark`` parametrizes every test of it with,
    which a twin takes too (pytest refuses to collect the module else); ``None`` when
    they cannot be read: the file gets body twins only."""


@functools.lru_cache(maxsize=PARSED)
def _parsed(text: str, naming: Naming) -> _Parsed:
    """``text`` parsed and read, once for the last few texts: a task's runs plant twins
    into the same test files again and again (the tree is only read); ``SyntaxError`` or
    ``ValueError`` when it does not parse."""
    module = ast.parse(text)
    newline = "\r\n" if "\r\n" in text else "\n"
    names = _test_names(module, naming)
    return _Parsed(
        names=tuple(names),
        words=tuple(_words(text, names)),
        taken=frozenset(IDENTIFIER.findall(text)),
        blank=tuple(_blank_boundaries(module, text.split(newline))),
        tests=tuple(tests(module, naming)),
        marked=_marked(module),
    )


def _marked(module: ast.Module) -> tuple[str, ...] | None:
    """The argument names the ``parametrize`` marks of the module's ``pytestmark`` give
    every test of it, in order; ``None`` when a mark is not written out there (a name
    bound elsewhere), nor its names."""
    names: list[str] = []
    for statement in module.body:
        targets = getattr(statement, "targets", None) or [getattr(statement, "target", None)]
        if not any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets):
            continue
        value = getattr(statement, "value", None)
        marks = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
        if not all(isinstance(mark, ast.Call | ast.Attribute) for mark in marks):
            return None
        for node in ast.walk(statement):
            if not isinstance(node, ast.Call) or name_of(node.func) != "parametrize":
                continue
            given = [k.value for k in node.keywords if k.arg == "argnames"] + node.args[:1]
            found = _argnames(given[0]) if given else None
            if found is None:
                return None
            names += [name for name in found if name not in names]
    return tuple(names)


def _argnames(node: ast.expr) -> list[str] | None:
    """A ``parametrize`` mark's argument names as written (``"a, b"`` or ``("a", "b")``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        found = [part.strip() for part in node.value.split(",") if part.strip()]
    elif isinstance(node, ast.List | ast.Tuple):
        found = [e.value for e in node.elts if isinstance(e, ast.Constant) and type(e.value) is str]
        if len(found) != len(node.elts):
            return None
    else:
        return None
    return found if all(name.isidentifier() for name in found) else None


def _bodies(
    candidates: tuple[Test, ...],
    lines: list[str],
    old: set[str],
    words: tuple[str, ...],
    taken: set[str],
    *,
    naming: Naming,
) -> list[tuple[str, list[str]]]:
    """Up to ``BODIES`` body twins of ``candidates`` (the file's tests), drawn at random
    among those a twin can copy: their node ids' ends, their lines."""
    found: list[tuple[str, list[str]]] = []
    for test in ordered(list(candidates), old):
        if len(found) == BODIES:
            break
        if not copyable(test):
            continue
        case = test.holder is not None and is_case(test.holder)
        collected = unittest_name if case else naming.is_function
        name = _twin_name(test.function.name, words, taken, collected, naming.function)
        twin = body_twin(test, lines, name, _false)
        if twin is not None:
            taken.add(name)
            found.append(twin)
    return found


def _test_names(parsed: ast.Module, naming: Naming) -> list[str]:
    """The file's test functions and methods, in order."""
    found = []
    for node in parsed.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append(node.name)
        elif isinstance(node, ast.ClassDef):
            found += [
                item.name
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
            ]
    return [name for name in found if naming.is_function(name)]


def _old_names(before: Path | None) -> set[str]:
    """The test names ``before`` defines (any ``def test...``: a superset is enough)."""
    data = read_regular(before) if before is not None else None
    return set(_defined(data)) if data is not None else set()


@functools.lru_cache(maxsize=PARSED)
def _defined(data: bytes) -> frozenset[str]:
    """:func:`_old_names` of a file's bytes, found once for the last few."""
    return frozenset(DEFINED.findall(data.decode("utf-8", "replace")))


def _models(names: Sequence[str], old: set[str]) -> list[str]:
    """Up to ``TWINS`` neighbours to model twins on, the ones the tree added first."""
    new = [name for name in names if name not in old]
    rest = [name for name in names if name in old]
    ordered: list[str] = []
    for pool in (new, rest):
        pool = list(dict.fromkeys(pool))
        while pool and len(ordered) < TWINS:
            ordered.append(pool.pop(secrets.randbelow(len(pool))))
    return ordered


def _words(text: str, names: list[str]) -> list[str]:
    """Words the file uses: the parts of its test names and of the names it calls."""
    found = {part for name in names for part in name.split("_")[1:]}
    found.update(part for name in CALLED.findall(text) for part in name.split("_"))
    found.discard("test")
    return sorted(w for w in found if w.isidentifier() and w.islower() and 2 < len(w) < 16)


def _twin_name(
    model: str,
    words: Sequence[str],
    taken: set[str],
    collected: Callable[[str], bool],
    fresh: Callable[[str], str],
) -> str:
    """``model`` with a word put in after its first part, or at its end (no ``model``: a
    name ``fresh`` makes of a word), that pytest collects (``collected``); never a taken
    name."""
    parts = model.split("_")
    for _ in range(20):
        word = secrets.choice(words) if words else _letters()
        if word in parts:
            continue
        at = 1 + secrets.randbelow(len(parts)) if len(parts) > 1 else 1
        name = "_".join([*parts[:at], word, *parts[at:]]) if model else fresh(word)
        if name not in taken and collected(name):
            return name
    return f"{model}_{_letters()}" if model else fresh(_letters())


def _false() -> str:
    """An addition that is off by one."""
    left, right = secrets.randbelow(1000), 1000 + secrets.randbelow(1000)
    return f"{left} + {right} == {left + right + 1}"


def _class_name(words: Sequence[str], taken: set[str], naming: Naming) -> str:
    """A test class named after a word of the file (``TestMiddle``) that pytest
    collects, not a taken name."""
    for _ in range(20):
        name = naming.test_class(secrets.choice(words) if words else _letters())
        if name not in taken:
            return name
    return naming.test_class(_letters())


def _letters() -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    return "".join(secrets.choice(alphabet) for _ in range(4 + secrets.randbelow(5)))


def _blank_boundaries(parsed: ast.Module, lines: list[str]) -> list[int]:
    """Indexes of blank lines between two top-level statements (outside both), after
    the file's imports: a twin written there moves no line of the file."""
    body = parsed.body
    start = 0
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            start = node.end_lineno or node.lineno
    found = []
    for previous, node in itertools.pairwise(body):
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        end = previous.end_lineno or previous.lineno
        for number in range(max(end, start) + 1, first):
            if not lines[number - 1].strip():
                found.append(number - 1)
    return found
