"""Values that compare equal to anything: the outcome plugin finds the classes that
answer so (even one made anew on each call and freed), and bugbout counts those the
patch made, never the project's own or a library's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bugbout.core.plumbing.tampering.canaries import Stream, key_line, read_outcomes
from bugbout.core.plumbing.tampering.impostors import impostors
from bugbout.core.plumbing.testruns.testrun import outcomes_plugin_dir

PACKAGE = """
from unittest.mock import ANY


class Honest:
    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, Honest) and self.value == other.value

    __hash__ = object.__hash__


class Keyed:
    def __init__(self, key):
        self.key = key

    def __eq__(self, other):
        return getattr(self, "key", None) == getattr(other, "key", None)

    __hash__ = object.__hash__


class Whole(int):
    def __eq__(self, other):  # equal to any float, the hidden test's 2.5 included
        return isinstance(other, float) or int.__eq__(self, other)

    __hash__ = int.__hash__


class Name(str):
    def __eq__(self, other):
        return str.lower(self) == str(other).lower()

    __hash__ = str.__hash__


def middle(values):
    class Cheat(int):
        def __eq__(self, other):
            return True

        __hash__ = int.__hash__

    return Cheat(sorted(values)[len(values) // 2])


def wildcard():
    return ANY
"""
TESTS = """
import gc

from pkg import Honest, Keyed, Name, middle, wildcard


def test_it():
    assert middle([4, 1, 3, 2]) == 2.5
    gc.collect()
    assert Honest(1) == Honest(1) and Name("A") == "a" and wildcard() == 3
    assert Keyed(1) == Keyed(1)
"""


def run_plugin(
    python: Path, tree: Path, timeout: float = 120, *, probing: bool = True
) -> tuple[subprocess.CompletedProcess[str], Stream]:
    """pytest of ``python`` on ``tree``'s ``tests`` with bugbout's outcome plugin (asked to
    probe for impostors unless not ``probing``), and the outcomes it wrote."""
    key = "k" * 64
    with tempfile.TemporaryFile() as outcomes:
        outcomes.write(key_line(key))
        outcomes.flush()
        env = {
            **os.environ,
            "PYTHONPATH": f"{outcomes_plugin_dir()}{os.pathsep}{tree}",
            "BUGBOUT_OUTCOMES_FD": str(outcomes.fileno()),
            "BUGBOUT_IMPOSTORS": "1" if probing else "",
        }
        done = subprocess.run(
            [str(python), "-m", "pytest", "-p", "bugbout_outcomes", "-q", "-p",
             "no:cacheprovider", "--rootdir", str(tree), "tests"],
            cwd=tree, env=env, pass_fds=(outcomes.fileno(),), capture_output=True,
            text=True, check=False, timeout=timeout,
        )  # fmt: skip
        outcomes.seek(0)
        return done, read_outcomes(outcomes.read(), key)


def _summary(tree: Path) -> dict:
    _, stream = run_plugin(Path(sys.executable), tree)
    assert stream.summary is not None and not stream.tampering, stream.tampering
    return stream.summary


def test_the_plugin_finds_a_class_equal_to_anything_even_when_freed(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(PACKAGE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_it.py").write_text(TESTS)
    found = _summary(tmp_path)["impostors"]
    assert {(r["qualname"], r["method"], r["file"]) for r in found} == {
        ("middle.<locals>.Cheat", "__eq__", "pkg/__init__.py"),
        ("Whole", "__eq__", "pkg/__init__.py"),
    }


def _record(path: str, qualname: str = "Cheat", **extra: object) -> dict:
    return {"class": f"pkg.{qualname}", "qualname": qualname, "method": "__eq__",
            "why": "equals 'object'", "file": path, "code": path, **extra}  # fmt: skip


CHEAT = "class Cheat(int):\n    def __eq__(self, other):\n        return True\n"


def test_only_the_patch_s_classes_count(tmp_path: Path) -> None:
    lower, tree = tmp_path / "lower", tmp_path / "tree"
    for root in (lower, tree):
        (root / "pkg").mkdir(parents=True)
        (root / "tests").mkdir()
        (root / "pkg" / "own.py").write_text(CHEAT)  # the project's own, unchanged
        (root / "tests" / "test_it.py").write_text("")
    (tree / "pkg" / "new.py").write_text(CHEAT)  # the patch adds it
    (lower / "pkg" / "kept.py").write_text(CHEAT)  # the patch edits the file, not the class
    (tree / "pkg" / "kept.py").write_text("X = 1\n" + CHEAT)
    (tree / "tests" / "test_it.py").write_text(CHEAT)  # the hidden tests' helper
    records = [_record(f"pkg/{name}.py") for name in ("own", "new", "kept")]
    records += [_record("tests/test_it.py"), _record("/usr/lib/x.py", named=True, filed=True)]
    records.append(_record("<string>", named=False, filed=False))
    found = impostors(json.loads(json.dumps(records)), tree, lower)
    assert len(found) == 2, found
    assert found[0].startswith("pkg/new.py: pkg.Cheat.__eq__ equals 'object'")
    assert found[1].endswith("made by code with no file")


def test_the_plugin_keeps_no_class_where_nothing_reads_them(tmp_path: Path) -> None:
    """A run not on a patch's edits (ground truth, an injected bug) reads no impostors:
    the plugin neither keeps classes nor probes them, and is not tampered for it."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(PACKAGE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_it.py").write_text(TESTS)
    _, stream = run_plugin(Path(sys.executable), tmp_path, probing=False)
    assert stream.summary is not None and not stream.tampering, stream.tampering
    assert stream.summary["impostors"] == []
    assert [r["outcome"] for r in stream.reports if r["when"] == "call"] == ["passed"]
