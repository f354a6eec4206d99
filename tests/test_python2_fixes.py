"""A fix of a bug only Python 2 had passes its tests before the fix on Python 3: its
reason says that its lines test for Python 2, not only that no test went from failing to
passing. Real git, real pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.contract.manager import make_plugins
from bugbout.core.pipeline import compute_oracles, mine_tasks
from bugbout.core.store.store import Store
from bugbout.testing import RepositoryBuilder
from history import calc_settings

TEXT = """\
import sys

PY2 = sys.version_info[0] == 2


def text(value):
    if PY2:
        return value.decode({encoding!r})
    return value
"""
TEST = """\
from calc.text import text


def test_text():
    assert text("abc") == "abc"
"""


@pytest.mark.slow
def test_a_python_2_fix_says_so(tmp_path: Path) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "calc"\n',
            "src/calc/__init__.py": "",
            "src/calc/text.py": TEXT.format(encoding="ascii"),
        },
    )
    fix = repo.commit(
        "Fix text of utf-8 bytes (#1)",
        {"src/calc/text.py": TEXT.format(encoding="utf-8"), "tests/test_text.py": TEST},
    )
    settings = calc_settings(repo.path)
    plugins = make_plugins(entry_points=False)
    store = Store(repo.path / ".bugbout")
    oracle = compute_oracles(settings, plugins, store, mine_tasks(settings, plugins, store)).root[
        fix[:12]
    ]
    assert oracle.status == "no-fail-to-pass"
    assert oracle.reason == (
        "no test failed before the fix and passed after it: the test the fix added or changed "
        "passed before it too: in this environment no test in its history fails without the fix; "
        "the fix's lines test for Python 2 "
        "(`PY2` in src/calc/text.py): it may fix a bug of Python 2 alone, which no Python "
        "bugbout runs tests on (3.6 and later) has"
    )


FROZEN = """\
import platform

PYPY = platform.python_implementation() == "PyPy"


class Frozen(Exception):
    def __setattr__(self, name, value):
        if PYPY:
            if name in ({names}):
                return super().__setattr__(name, value)
        raise AttributeError(name)
"""
FROZEN_TEST = """\
import pytest

from calc.frozen import Frozen


def test_raise_from_none():
    with pytest.raises(Frozen) as caught:
        try:
            raise ValueError()
        except ValueError:
            raise Frozen() from None
    assert caught.value.__suppress_context__
"""


@pytest.mark.slow
def test_a_pypy_fix_says_so(tmp_path: Path) -> None:
    """attrs f2dabeae82c7 (2020): exception chaining of frozen classes, fixed on PyPy."""
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "calc"\n',
            "src/calc/__init__.py": "",
            "src/calc/frozen.py": FROZEN.format(names='"__cause__",'),
        },
    )
    fix = repo.commit(
        "Fix exception chaining on PyPy (#1)",
        {
            "src/calc/frozen.py": FROZEN.format(names='"__cause__", "__context__"'),
            "tests/test_frozen.py": FROZEN_TEST,
        },
    )
    settings = calc_settings(repo.path)
    plugins = make_plugins(entry_points=False)
    store = Store(repo.path / ".bugbout")
    tasks = mine_tasks(settings, plugins, store)
    oracle = compute_oracles(settings, plugins, store, tasks).root[fix[:12]]
    assert oracle.status == "no-fail-to-pass"
    assert oracle.reason.endswith(
        "; the fix's lines test for PyPy (`PYPY` in src/calc/frozen.py): it may fix a bug of "
        "PyPy alone, and bugbout runs tests on CPython"
    ), oracle.reason
