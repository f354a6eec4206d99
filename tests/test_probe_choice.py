"""The impostor probe runs only on classes whose answers could count against the run: a
library's classes (comparisons that dataclasses make from a string, and the class a
``slots=True`` dataclass leaves behind, included) start no probe child, while the
rootdir's classes and one made by code with no file are still probed and found."""

from __future__ import annotations

import sys
from pathlib import Path

from test_impostors import run_plugin

LIBRARY = """
import dataclasses


@dataclasses.dataclass
class Point:
    x: int


@dataclasses.dataclass(frozen=True, slots=True)
class Slotted:
    y: int
"""
FORKS = """
import os

_fork = os.fork


def _counted():
    pid = _fork()
    if pid:
        with open({mark!r}, "a") as mark:
            mark.write("fork\\n")
    return pid


os.fork = _counted
"""
CLEAN = """
from bugbout_choice_lib import Point, Slotted


def test_it():
    assert Point(1) == Point(1) and Slotted(2) != Slotted(3)
"""
CHEATS = """
from bugbout_choice_lib import Point

from pkg import Cheat

NO_FILE = '''
class Anything(object):
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__
'''


def test_it():
    made = {}
    exec(compile(NO_FILE, "<made>", "exec"), {"__name__": "json"}, made)
    assert made["Anything"]() == 3 and Cheat(2) == 2.5 and Point(1) == Point(1)
"""


def _tree(root: Path, tests: str) -> Path:
    """A project whose tests use a library outside it, every probe child counted in
    ``forks``."""
    site, tree = root / "site", root / "tree"
    site.mkdir()
    (site / "bugbout_choice_lib.py").write_text(LIBRARY)
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text(
        "class Cheat(int):\n    def __eq__(self, other):\n        return True\n\n"
        "    __hash__ = int.__hash__\n"
    )
    (tree / "tests").mkdir()
    (tree / "tests" / "conftest.py").write_text(
        f"import sys\nsys.path.insert(0, {str(site)!r})\n" + FORKS.format(mark=str(root / "forks"))
    )
    (tree / "tests" / "test_it.py").write_text(tests)
    return tree


def test_a_library_s_dataclasses_start_no_probe(tmp_path: Path) -> None:
    done, stream = run_plugin(Path(sys.executable), _tree(tmp_path, CLEAN))
    assert stream.summary is not None and not stream.tampering, done.stdout[-2000:]
    assert stream.summary["impostors"] == []
    assert [r["outcome"] for r in stream.reports if r["when"] == "call"] == ["passed"]
    assert not (tmp_path / "forks").exists()


def test_the_rootdir_s_classes_and_one_of_no_file_are_still_found(tmp_path: Path) -> None:
    done, stream = run_plugin(Path(sys.executable), _tree(tmp_path, CHEATS))
    assert stream.summary is not None and not stream.tampering, done.stdout[-2000:]
    found = {(r["qualname"], r["code"], r["named"]) for r in stream.summary["impostors"]}
    assert found == {("Cheat", "pkg/__init__.py", True), ("Anything", "<made>", False)}, found
    assert (tmp_path / "forks").read_text() == "fork\n"
