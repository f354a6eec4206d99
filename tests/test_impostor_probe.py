"""The impostor probe never ends the run: on Python 3.6 (pytest 3.8), a class whose
instance made without its ``__init__`` recurses without end aborted the interpreter
(jsonschema's 2018 runs, through pyrsistent's ``PMap``); a library class is not probed
for a builtin slot it assigns."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bugbout.core.plumbing.testruns.testrun import outcomes_plugin_dir
from old_pytests import old_pytest
from test_impostors import run_plugin

LAZY = """
class Lazy(object):
    '''A map read through its attributes, as pyrsistent's PMap is; an instance made
    without __init__ recurses without end, and retries when that fails.'''

    __slots__ = ("_items",)

    def __init__(self, items):
        self._items = items

    def __getattr__(self, name):
        try:
            return self[name]
        except Exception:
            return self[name]

    def __getitem__(self, key):
        return self._items[key]

    def __eq__(self, other):
        return len(self._items) == len(other)

    __hash__ = object.__hash__


class Cheat(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__
"""
TESTS = """
from pkg import Cheat, Lazy


def test_lazy():
    assert Lazy({"a": 1}).a == 1 and Lazy({}) == {}
    assert Cheat(2) == 2.5
"""


def _run(python: Path, tree: Path) -> tuple[subprocess.CompletedProcess[str], dict | None]:
    done, stream = run_plugin(python, tree, timeout=300)
    return done, stream.summary


def test_a_probe_that_aborts_python_36_does_not_end_the_run(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(LAZY)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_it.py").write_text(TESTS)
    done, summary = _run(old_pytest("3.8.2"), tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert summary is not None
    assert "Fatal Python error" not in done.stdout + done.stderr
    found = {(r["qualname"], r["method"]) for r in summary["impostors"]}
    assert found == {("Cheat", "__eq__")}, summary["impostors"]


LIBRARY = """
class Map(object):
    def __eq__(self, other):
        return self is other

    __ne__ = object.__ne__
    __hash__ = object.__hash__
"""


def test_a_library_class_assigning_a_builtin_slot_is_not_a_suspect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, site = tmp_path / "project", tmp_path / "site"
    root.mkdir()
    site.mkdir()
    (site / "bugbout_probe_lib.py").write_text(LIBRARY)
    monkeypatch.syspath_prepend(str(outcomes_plugin_dir()))
    monkeypatch.syspath_prepend(str(site))
    import bugbout_impostors

    found = bugbout_impostors.Impostors(str(root))
    import bugbout_probe_lib

    found.scan()
    assert bugbout_probe_lib.Map not in found.probed()
    monkeypatch.delitem(sys.modules, "bugbout_probe_lib")
