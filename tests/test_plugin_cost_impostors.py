"""The impostor scan's look at each class: a class is looked at when it is first seen
and again at the session's end, so one given a comparison that equals anything after a
collection first saw it is still found."""

from __future__ import annotations

import sys
from pathlib import Path

from test_impostors import run_plugin

PACKAGE = """
class Cheat(int):
    pass


def middle(values):
    Cheat.__eq__ = lambda self, other: True
    Cheat.__hash__ = int.__hash__
    return Cheat(sorted(values)[len(values) // 2])
"""
TESTS = """
import gc

from pkg import middle

gc.collect()  # the collector's scan sees Cheat now, before it compares as anything


def test_it():
    assert middle([4, 1, 3, 2]) == 2.5
"""


def test_a_class_armed_after_it_was_first_seen_is_found(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(PACKAGE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_it.py").write_text(TESTS)
    done, stream = run_plugin(Path(sys.executable), tmp_path)
    assert "1 passed" in done.stdout, done.stdout + done.stderr
    assert stream.summary is not None and not stream.tampering, stream.tampering
    found = {(r["qualname"], r["method"], r["file"]) for r in stream.summary["impostors"]}
    assert found == {("Cheat", "__eq__", "pkg/__init__.py")}
