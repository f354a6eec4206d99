"""The coverage plugin on every kind of Python it traces with: which functions each test
ran (a decorated function, a method, a lambda, a generator resumed in a later test), and
what runs while a module is imported counted outside any test. ``sys.monitoring`` on
3.12, the package's functions rewritten to mark themselves on 3.11 and on 3.6 (with an
old pytest)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import pytest

from bugbout.core.plumbing.selection.affected import CoverageMap, read_coverage
from bugbout.core.plumbing.testruns.testrun import outcomes_plugin_dir
from local_index import Wheel, serve
from old_pytests import old_pytest
from python_mirror import pyenv_python

CORE = '''import functools


def plain(x):
    return x + 1


@functools.lru_cache(maxsize=None)
def cached(x):
    """Twice plain."""
    return plain(x) * 2


def counter():
    n = 0
    while True:
        n += 1
        yield n


class Shape(object):
    def area(self):
        return 4


square = lambda x: x * x  # noqa: E731
'''
LATE = "from pkg.core import plain\n\nLATE = plain(41)\n\n\ndef late():\n    return LATE\n"
TESTS = """from pkg.core import Shape, cached, counter, plain, square

STATE = {}


def test_plain():
    assert plain(1) == 2


def test_cached():
    assert cached(1) == 4


def test_area():
    assert Shape().area() == 4


def test_square():
    assert square(3) == 9


def test_started():
    STATE['numbers'] = counter()
    assert next(STATE['numbers']) == 1


def test_resumed():
    assert next(STATE['numbers']) == 2


def test_late():
    from pkg.late import late
    assert late() == 42


def test_spawned():
    import subprocess, sys
    subprocess.call([sys.executable, "-c", "import pkg.core; pkg.core.plain(1)"])
"""
PLAIN, CACHED, COUNTER, AREA, SQUARE, LATE_FUNCTION = (
    ("src/pkg/core.py", 4), ("src/pkg/core.py", 8), ("src/pkg/core.py", 14),
    ("src/pkg/core.py", 22), ("src/pkg/core.py", 26), ("src/pkg/late.py", 6),
)  # fmt: skip
RUNNER = ("pytest", "pluggy", "iniconfig", "packaging", "pygments")


def traced(python: str, tree: Path) -> CoverageMap:
    """The map of the suite of ``tree`` run by ``python``'s pytest with the plugin."""
    with tempfile.TemporaryFile() as written:
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "PYTHONPATH": f"{outcomes_plugin_dir()}{os.pathsep}{tree / 'src'}",
            "PYTHONDONTWRITEBYTECODE": "1",
            "BUGBOUT_COVERAGE_FD": str(written.fileno()),
            "BUGBOUT_SOURCE_DIRS": json.dumps(["src/pkg"]),
        }
        done = subprocess.run(
            [python, "-m", "pytest", "-p", "bugbout_coverage", "-p", "no:cacheprovider", "tests"],
            cwd=tree, env=env, pass_fds=(written.fileno(),), capture_output=True, text=True,
            check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        written.seek(0)
        return read_coverage([written.read()])


def ran(coverage: CoverageMap, test: str) -> set[tuple[str, int]]:
    trace = coverage.traces[coverage.tests[f"tests/test_core.py::{test}"]]
    return {_named(coverage, number) for number in trace}


def _named(coverage: CoverageMap, number: int) -> tuple[str, int]:
    file, line = coverage.functions[number]
    return coverage.files[file], line


@pytest.fixture(scope="module")
def python312(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Python 3.12 with this interpreter's pytest, from a local index."""
    prefix = pyenv_python("3.12")
    if prefix is None:
        pytest.fail("no Python 3.12 on this machine: `pyenv install 3.12`")
    venv = tmp_path_factory.mktemp("py312") / "venv"
    subprocess.run(["uv", "venv", "-q", "-p", str(prefix / "bin/python3.12"), venv], check=True)
    wheels = [Wheel.installed(name, "2024-01-01T00:00:00Z") for name in RUNNER]
    with serve(wheels) as index:
        subprocess.run(
            ["uv", "pip", "install", "-q", "--python", str(venv / "bin/python"),
             "--index-url", index.url, *RUNNER],
            check=True, env={**os.environ, "UV_NO_CACHE": "1"},
        )  # fmt: skip
    return str(venv / "bin/python")


@pytest.mark.parametrize("kind", ["running", "3.12", "3.6 with pytest 3.8"])
def test_each_test_is_charged_with_the_functions_it_ran(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    tree = tmp_path / "tree"
    for path, text in {
        "src/pkg/__init__.py": "",
        "src/pkg/core.py": CORE,
        "src/pkg/late.py": LATE,
        "tests/test_core.py": TESTS,
    }.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text)
    python = {
        "running": lambda: sys.executable,
        "3.12": lambda: request.getfixturevalue("python312"),
        "3.6 with pytest 3.8": lambda: str(old_pytest("3.8.2")),
    }[kind]()
    coverage = traced(python, tree)
    assert ran(coverage, "test_plain") == {PLAIN}
    assert ran(coverage, "test_cached") == {CACHED, PLAIN}  # its decorator's line
    assert ran(coverage, "test_area") == {AREA}
    assert ran(coverage, "test_square") == {SQUARE}
    assert COUNTER in ran(coverage, "test_started")
    assert COUNTER in ran(coverage, "test_resumed")  # resumed, not started, there
    # pkg.late ran plain while it was imported: what that computed outlasts the test
    assert ran(coverage, "test_late") == {LATE_FUNCTION}
    assert {_named(coverage, number) for number in coverage.outside} == {PLAIN}
    assert not coverage.untraced
    # what a child process ran is not seen: that test runs for every patch (3.8+)
    assert ("tests/test_core.py::test_spawned" in coverage.tests) == kind.startswith("3.6")


TRICKY = '''from __future__ import annotations

import asyncio


class Base:
    def name(self) -> str:
        return "base"


class Child(Base):
    """A class."""

    def name(self) -> str:
        """Its docstring stays its docstring."""
        return "child of " + super().name()

    def only_doc(self):
        """Nothing else."""


def outer(n, scale=lambda v: v * 10):
    def inner(k):
        return k + n
    return [scale(inner(k)) for k in range(2)], sum(x for x in (1, 2))


def relay():
    got = yield 1
    yield from range(got, got + 2)


async def waited():
    await asyncio.sleep(0)
    return 5


def results():
    walk = relay()
    first = next(walk)
    return (
        Child().name(), Child.name.__doc__, Child().only_doc(), outer(3), first,
        walk.send(7), list(walk), asyncio.run(waited()),
    )
'''


def test_marking_changes_no_value_no_line_and_marks_what_ran() -> None:
    sys.path.insert(0, str(outcomes_plugin_dir()))
    try:
        import bugbout_imports
    finally:
        sys.path.remove(str(outcomes_plugin_dir()))
    numbers: dict[int, int] = {}
    code = bugbout_imports.marked(
        TRICKY.encode(), "tricky.py", lambda line: numbers.setdefault(line, len(numbers))
    )
    marks = bytearray(len(numbers))
    plain: dict[str, object] = {}
    exec(compile(TRICKY, "tricky.py", "exec"), plain)
    rewritten: dict[str, object] = {}
    import builtins

    setattr(builtins, bugbout_imports.MARKS, marks)
    try:
        exec(code, rewritten)
        assert rewritten["results"]() == plain["results"]()  # type: ignore[operator]
    finally:
        delattr(builtins, bugbout_imports.MARKS)
    assert _first_lines(code) == _first_lines(compile(TRICKY, "tricky.py", "exec"))
    lines = TRICKY.splitlines()
    marked = {line for line, number in numbers.items() if marks[number]}
    expected = {
        n for n, text in enumerate(lines, 1) if text.lstrip().startswith(("def ", "async def "))
    }
    expected.add(next(n for n, text in enumerate(lines, 1) if "scale=lambda" in text))
    assert marked == expected


def _first_lines(code: types.CodeType) -> list[tuple[str, int]]:
    """Every code object's name and first line, nested ones too."""
    found = [(code.co_name, code.co_firstlineno)]
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            found += _first_lines(constant)
    return found
