"""Fixes of bugs that only Python 2 had: what a reason says when their tests pass on
Python 3 before the fix too.

Until about 2020 many projects ran on Python 2 and 3 from one tree, switching on the
interpreter (``if PY2:``, ``sys.version_info[0] < 3``, ``six.PY2``). A fix of a bug only
Python 2 had changes lines behind such a switch, or tests that take it; on the Python 3
that bugbout runs, its tests pass before the fix as after it. The reason of such a task
names the switch and the file it is in, instead of only "no fail-to-pass".
"""

from __future__ import annotations

import re
import sys

from bugbout.core.plumbing.git import Git
from bugbout.core.store.records import Task

SWITCH = re.compile(
    r"\b(?:six\.)?(?:IS_)?PY(?:THON)?_?[23]\b"
    r"|\bsys\.version_info\s*(?:\[\s*0\s*\]|\.major)\s*[<>=!]=?\s*[23]\b"
    r"|\bsys\.version_info\s*[<>=!]=?\s*\(\s*(?:2\s*,|3\s*,\s*(?:0\s*)?\))"
)
"""A test of whether the interpreter is Python 2 or 3 (``PY2``, ``six.PY3``,
``sys.version_info[0] < 3``, ``sys.version_info >= (3,)``, ...)."""


CONTEXT = 3
"""The lines around each change that are read too: the switch a changed line is behind."""


def python2_note(git: Git, task: Task) -> str:
    """What a no-fail-to-pass reason adds when a line the fix added or removed, or one of
    the :data:`CONTEXT` lines around it, tests whether the interpreter is Python 2 (empty
    when none does)."""
    for path in [*task.source_files, *task.test_files]:
        diff = git.run("diff", "--no-ext-diff", f"-U{CONTEXT}", task.parent, task.sha, "--", path)
        for line in diff.splitlines():
            if not line.startswith(("+", "-", " ")) or line.startswith(("+++", "---")):
                continue
            found = SWITCH.search(line)
            if found:
                return (
                    f"; the fix's lines test for Python 2 (`{found.group(0)}` in {path}): it "
                    "may fix a bug of Python 2 alone, which no Python bugbout runs tests on "
                    "(3.6 and later) has"
                )
    return ""


_LACKING = re.compile(r"module '(?P<module>\w+)' has no attribute '(?P<name>\w+)'")


def stdlib_note(error: str) -> str:
    """What a reason adds when ``error`` says a module of the standard library lacks a
    name (``itertools.izip``, ``types.NoneType`` before 3.10): the code was written for
    another Python, most often Python 2 (empty otherwise)."""
    found = _LACKING.search(error)
    if not found or found["module"] not in sys.stdlib_module_names:
        return ""
    return (
        f": `{found['module']}.{found['name']}` is not in this Python's standard library, "
        "so the code was written for another Python (Python 2, for a fix of its era)"
    )


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
