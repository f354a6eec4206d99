"""A fix's tests that pass before it because they cannot fail name that cause in the
reason: an assertion that tests a constant, always true (``assert "error", x == y``),
even when the fix is a merge. Real git, real pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.truth.unreachable import _constant_asserts, _test_node
from bugbout.testing import RepositoryBuilder
from history import calc_settings, ground_truth

ALWAYS = """\
from calc import ops


def test_half_of_odd():
    assert "error", ops.half(3) == 1.5
"""


@pytest.mark.slow
def test_a_merge_tested_by_a_constant_says_the_test_cannot_fail(tmp_path: Path) -> None:
    """Before the merge ``half`` does not exist, yet the test passes: its assertion tests
    the string; the reason says so, and not that the merge brought its whole branch."""
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "calc"\n',
            "src/calc/__init__.py": "",
            "src/calc/ops.py": "def double(x):\n    return x * 2\n",
            "tests/__init__.py": "",
        },
    )
    repo.branch("half")
    repo.commit(
        "Fix half of odd numbers",
        {
            "src/calc/ops.py": "def double(x):\n    return x * 2\n\n\n"
            "def half(x):\n    return x / 2\n",
            "tests/test_half.py": ALWAYS,
        },
    )
    repo.switch("main")
    repo.commit("Document calc", {"README.md": "calc\n"})
    merge = repo.merge("half", "Merge pull request #22 from dev/half\n\nFix half (#21)")
    oracle = ground_truth(calc_settings(repo.path)).root[merge[:12]]
    assert oracle.status == "no-fail-to-pass"
    assert oracle.reason is not None
    assert oracle.reason.endswith(
        "; tests/test_half.py::test_half_of_odd cannot fail before the fix: its only "
        "assertion (line 5 of tests/test_half.py) tests the constant 'error', always true "
        "(what follows its comma is the message, read only when the assertion fails), on "
        "any Python"
    )


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        (ALWAYS, [5]),
        ("def test_x():\n    assert (f(), 'f works')\n", [2]),  # a tuple
        ("def test_x():\n    assert 1\n    assert b'x', f()\n", [2, 3]),
        ("def test_x():\n    assert 'a', f()\n    assert f() == 2\n", []),  # one checks
        ("def test_x():\n    assert 0, 'never'\n", []),  # always false
        ("def test_x():\n    assert '', f()\n", []),
        ("def test_x():\n    assert ()\n", []),
        ("def test_x():\n    assert None\n", []),
        ("def test_x():\n    f()\n", []),  # no assertion
        ("def test_x():\n    assert 'a'\n    assert_equal(f(), 1)\n", []),
        ("def test_x():\n    with pytest.raises(E):\n        assert 'a'\n", []),
    ],
)
def test_which_assertions_always_hold(source: str, lines: list[int]) -> None:
    name = source.split("def ", 1)[1].split("(", 1)[0]
    scope = _test_node(source.encode(), [name])
    assert scope is not None
    assert [node.lineno for node in _constant_asserts(scope)] == lines
