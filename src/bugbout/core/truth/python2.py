"""Fixes of bugs that only Python 2 (or PyPy) had: what a reason says when their tests
pass on CPython 3 before the fix too.

Until about 2020 many projects ran on Python 2 and 3 from one tree, switching on the
interpreter (``if PY2:``, ``sys.version_info[0] < 3``, ``six.PY2``; ``if PYPY:`` for
PyPy). A fix of a bug only Python 2 or PyPy had changes lines behind such a switch, or
tests that take it; on the CPython 3 that bugbout runs, its tests pass before the fix as
after it. The reason of such a task names the switch and the file it is in, instead of
only "no fail-to-pass".
"""

from __future__ import annotations

import ast
import re
import sys

from bugbout.core.plumbing.trees.git import Git
from bugbout.core.store.records import Task

SWITCH = re.compile(
    r"\b(?:six\.)?(?:IS_)?PY(?:THON)?_?[23]\b"
    r"|\bsys\.version_info\s*(?:\[\s*0\s*\]|\.major)\s*[<>=!]=?\s*[23]\b"
    r"|\bsys\.version_info\s*[<>=!]=?\s*\(\s*(?:2\s*,|3\s*,\s*(?:0\s*)?\))"
)
"""A test of whether the interpreter is Python 2 or 3 (``PY2``, ``six.PY3``,
``sys.version_info[0] < 3``, ``sys.version_info >= (3,)``, ...)."""
PYPY_SWITCH = re.compile(r"\b(?:IS_)?PYPY\b|\bpython_implementation\(\)|\bpypy_version_info\b")
"""A test of whether the interpreter is PyPy (``PYPY``, ``platform.python_implementation()``,
``hasattr(sys, "pypy_version_info")``)."""


def python2_note(git: Git, task: Task) -> str:
    """What a no-fail-to-pass reason adds when every line the fix added or removed in its
    source files, or else in its test files, sits behind a test of whether the
    interpreter is Python 2 or PyPy: inside an ``if`` on one, or a function or class decorated
    with one (empty otherwise). Blank lines, comments and imports do not count; a
    refactor with one change under ``if PY2:`` among many elsewhere is not a fix of
    Python 2."""
    for paths in (task.source_files, task.test_files):
        if found := _behind_switches(git, task, paths):
            switch, path = found
            if PYPY_SWITCH.search(switch):
                return (
                    f"; the fix's lines test for PyPy (`{switch}` in {path}): it may fix a bug "
                    "of PyPy alone, and bugbout runs tests on CPython"
                )
            return (
                f"; the fix's lines test for Python 2 (`{switch}` in {path}): it "
                "may fix a bug of Python 2 alone, which no Python bugbout runs tests on "
                "(3.6 and later) has"
            )
    return ""


def _behind_switches(git: Git, task: Task, paths: list[str]) -> tuple[str, str] | None:
    """The first switch (the first on PyPy, if any) and its file when every changed line
    of ``paths`` is behind one."""
    found: list[tuple[str, str]] = []
    for path in paths:
        for rev, numbers in _changed(git, task, path):
            text = git.run("show", f"{rev}:{path}")
            scopes, lines = _scopes(text), text.splitlines()
            for number in numbers:
                line = lines[number - 1].strip() if number <= len(lines) else ""
                if not line or line.startswith("#") or _IMPORT.match(line):
                    continue
                switch = next((s for start, end, s in scopes if start <= number <= end), None)
                if switch is None:
                    return None
                found.append((switch, path))
    pypy = [each for each in found if PYPY_SWITCH.search(each[0])]
    return next(iter(pypy or found), None)


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)
_IMPORT = re.compile(r"(?:import|from)\s")


def _changed(git: Git, task: Task, path: str) -> list[tuple[str, list[int]]]:
    """The lines of ``path`` the fix removed (numbered in its parent) and added (in it)."""
    diff = git.run("diff", "--no-ext-diff", "-U0", task.parent, task.sha, "--", path)
    removed: list[int] = []
    added: list[int] = []
    for hunk in _HUNK.finditer(diff):
        old, old_count, new, new_count = hunk.groups()
        removed += range(int(old), int(old) + int(old_count or 1))
        added += range(int(new), int(new) + int(new_count or 1))
    return [
        (rev, numbers) for rev, numbers in ((task.parent, removed), (task.sha, added)) if numbers
    ]


def _scopes(text: str) -> list[tuple[int, int, str]]:
    """The lines behind each switch of ``text``: an ``if`` on one (its test, body and
    ``else``), a function or class decorated with one (``skipif(PY3, ...)``)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):  # Python 2's syntax: no scopes known
        return []
    scopes = []
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            tests = [node.test]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            tests = node.decorator_list
        else:
            continue
        for test in tests:
            segment = ast.get_source_segment(text, test) or ""
            if found := SWITCH.search(segment) or PYPY_SWITCH.search(segment):
                start = min(node.lineno, *(d.lineno for d in tests))
                scopes.append((start, node.end_lineno or node.lineno, found.group(0)))
                break
    return scopes


_LACKING = re.compile(r"module '(?P<module>\w+)' has no attribute '(?P<name>\w+)'")


_SIGNATURE = "Function has keyword-only parameters or annotations"
"""What ``inspect.getargspec`` raises on Python 3.4 to 3.10 for a callable it cannot
describe; builtins such as ``sorted`` among them since 3.4 gave them signatures."""


def stdlib_note(error: str, detail: str = "") -> str:
    """What a reason adds when ``error`` says a module of the standard library lacks a
    name (``itertools.izip``, ``types.NoneType`` before 3.10; an ``ImportError`` that
    names no module, as on Python 3.6, read with the ``from ... import`` line of the run's
    ``detail``), or ``inspect.getargspec`` refuses a builtin (Python 3.4 on): the code was
    written for another Python, most often Python 2 (empty otherwise)."""
    if _SIGNATURE in error:
        return (
            ": `inspect.getargspec` refuses a callable with keyword-only parameters or "
            "annotations, as builtins have on Python 3.4 and later: the code was written for "
            "an older Python (3.3 or 2), which bugbout cannot run tests on (3.6 and later)"
        )
    found = _LACKING.search(error)
    module, name = (found["module"], found["name"]) if found else _imported(error, detail)
    if module.partition(".")[0] not in sys.stdlib_module_names:
        return ""
    if name in PYTHON2_STDLIB.get(module, ()):
        return (
            f": `{module}.{name}` is a name of Python 2's standard library alone, so the code "
            "at this fix runs on Python 2 only, and bugbout runs tests on Python 3.6 and "
            "later: this era cannot be reproduced"
        )
    return (
        f": `{module}.{name}` is not in this Python's standard library, "
        "so the code was written for another Python (Python 2, for a fix of its era)"
    )


PYTHON2_STDLIB = {
    "itertools": ("izip", "imap", "ifilter", "ifilterfalse", "izip_longest"),
    "string": ("letters", "lowercase", "uppercase", "maketrans", "joinfields"),
    "sys": ("maxint", "exc_clear", "setdefaultencoding"),
    "os": ("getcwdu",),
    "urllib": ("urlencode", "quote", "unquote", "urlopen", "quote_plus", "unquote_plus"),
    "types": ("StringType", "UnicodeType", "StringTypes", "ClassType", "InstanceType"),
}
"""Names of Python 2's standard library that no Python 3 has, by module."""
_CANNOT_IMPORT = re.compile(r"cannot import name '(?P<name>\w+)'(?: from '(?P<module>[\w.]+)')?")


def _imported(error: str, detail: str) -> tuple[str, str]:
    """The module and name an ``ImportError`` of ``error`` could not import: the module
    from the message, else from the last ``from <module> import`` of ``name`` in
    ``detail`` (empty when neither says)."""
    found = _CANNOT_IMPORT.search(error)
    if not found:
        return "", ""
    if found["module"]:
        return found["module"], found["name"]
    line = rf"^\s*from\s+([\w.]+)\s+import\b.*\b{re.escape(found['name'])}\b"
    modules = re.findall(line, detail, re.MULTILINE)
    return (modules[-1] if modules else ""), found["name"]


PYTHON2_NAMES = frozenset(
    ("basestring", "unicode", "unichr", "long", "xrange", "raw_input", "execfile", "cmp")
)
"""Builtins of Python 2 that Python 3 dropped: code that uses them needs Python 2."""
NAME_ERROR = re.compile(r"^NameError: name '(?P<name>\w+)' is not defined")
_MESSAGE = re.compile(
    r"^AttributeError: '\w*(?:Error|Exception|Warning)' object has no attribute 'message'"
)
_BYTES_AS_TEXT = re.compile(
    r"^AssertionError: (?:assert )?(?P<a>b?)(?P<q>['\"])(?P<x>.*)(?P=q) (?:!=|==) "
    r"(?P<b>b?)(?P<r>['\"])(?P<y>.*)(?P=r)$"
)
_MUTATED = re.compile(r"^RuntimeError: OrderedDict mutated during iteration")


def older_python_failure(message: str) -> tuple[str, str]:
    """Why a test that fails with ``message`` passes on an older Python alone, and which:
    it uses a builtin of Python 2, reads an exception's ``message`` (Python 3 dropped
    it), finds bytes unequal to the same text (one type on Python 2), or changes an
    ``OrderedDict`` it iterates (refused since Python 3.5); empty otherwise."""
    found = NAME_ERROR.match(message)
    if found and found["name"] in PYTHON2_NAMES:
        return f"`{found['name']}` is a builtin of Python 2 alone", "Python 2"
    if _MESSAGE.match(message):
        return "Python 2's exceptions had a `message` attribute, Python 3's have none", "Python 2"
    found = _BYTES_AS_TEXT.match(message)
    if found and found["x"] == found["y"] and {found["a"], found["b"]} == {"", "b"}:
        return "it compares bytes with the same text, equal on Python 2 alone", "Python 2"
    if _MUTATED.match(message):
        return (
            "the code changes an OrderedDict while iterating over it, which Python 3.5 and "
            "later refuse",
            "Python 3.4 or older",
        )
    return "", ""
