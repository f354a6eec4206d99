"""A test whose only assertion sits after the raising statement of a ``raises`` block
never asserts anything: a fix tested so (a new error message) has no fail-to-pass test,
and the reason says the test is the cause. A test that checks only that a block warns
passes before a fix that adds the warning when something else warned alike: the reason
says so. Real git, real pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.truth.unreachable import _only_warns, _test_node, _unreachable_assert
from bugbout.testing import RepositoryBuilder
from history import calc_settings, ground_truth

DEAD = """\
import pytest

from calc.ops import half


def test_half_of_text_says_why():
    with pytest.raises(TypeError) as caught:
        half("two")
        assert "a number" in str(caught.value)
"""


@pytest.mark.slow
def test_a_fix_tested_by_an_assertion_that_never_runs_says_so(tmp_path: Path) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "calc"\n',
            "src/calc/__init__.py": "",
            "src/calc/ops.py": "def half(x):\n    return x / 2\n",
            "tests/__init__.py": "",
            "tests/test_ops.py": "from calc.ops import half\n\n\n"
            "def test_half():\n    assert half(4) == 2\n",
        },
    )
    fix = repo.commit(
        "Fix the message of half's error (#1)",
        {
            "src/calc/ops.py": "def half(x):\n    if not isinstance(x, (int, float)):\n"
            "        raise TypeError('half takes a number')\n    return x / 2\n",
            "tests/test_half.py": DEAD,
        },
    )
    oracle = ground_truth(calc_settings(repo.path)).root[fix[:12]]
    assert oracle.status == "no-fail-to-pass"
    assert oracle.reason is not None
    assert (
        "tests/test_half.py::test_half_of_text_says_why cannot fail before the fix: its only "
        "assertion (line 9 of tests/test_half.py)"
    ) in oracle.reason


@pytest.mark.parametrize(
    ("source", "names", "line"),
    [
        (DEAD, ["test_half_of_text_says_why"], 9),
        (  # the assertion after the block runs
            DEAD + "    assert caught.type is TypeError\n",
            ["test_half_of_text_says_why"],
            None,
        ),
        (  # no assertion: it checks only that the block raises
            "def test_x():\n    with pytest.raises(KeyError):\n        {}['a']\n",
            ["test_x"],
            0,
        ),
        (  # a method of a test class, with unittest's context manager
            "class TestX:\n    def test_y(self):\n        with self.assertRaises(E):\n"
            "            f()\n            assert g()\n",
            ["TestX", "test_y"],
            5,
        ),
        (  # nose's assert_raises, called
            "def test_x():\n    assert_raises(E, lambda: f(1))\n",
            ["test_x"],
            0,
        ),
        (  # a check that runs besides
            "def test_x():\n    assert_raises(E, f)\n    assert_equal(g(), 1)\n",
            ["test_x"],
            None,
        ),
        (  # another context manager: its block runs to the end
            "def test_x():\n    with open('f') as f:\n        f.read()\n        assert f\n",
            ["test_x"],
            None,
        ),
        ("def test_x():\n    print 'Python 2'\n", ["test_x"], None),
        (DEAD, ["test_absent"], None),
    ],
)
def test_what_a_test_checks_besides_raising(
    source: str, names: list[str], line: int | None
) -> None:
    scope = _test_node(source.encode(), names)
    assert (_unreachable_assert(scope) if scope else None) == line


@pytest.mark.parametrize(
    ("source", "names", "only"),
    [
        ("def test_x():\n    pytest.deprecated_call(lambda: f(1))\n", ["test_x"], True),
        (
            "def test_x():\n    with pytest.warns(DeprecationWarning):\n        f(1)\n",
            ["test_x"],
            True,
        ),
        (  # unittest's, in a class
            "class TestX:\n    def test_y(self):\n"
            "        with self.assertWarns(DeprecationWarning):\n            f()\n",
            ["TestX", "test_y"],
            True,
        ),
        (  # the warning's message is checked: an assertion that runs
            "def test_x():\n    with pytest.warns(UserWarning) as caught:\n        f(1)\n"
            "    assert 'old' in str(caught[0].message)\n",
            ["test_x"],
            False,
        ),
        ("def test_x():\n    assert_equal(f(1), 1)\n", ["test_x"], False),
        ("def test_x():\n    f(1)\n", ["test_x"], False),  # expects no warning
    ],
)
def test_what_a_test_checks_besides_warning(source: str, names: list[str], only: bool) -> None:
    scope = _test_node(source.encode(), names)
    assert scope is not None
    assert _only_warns(scope) is only


WARNED = """\
import pytest

from calc.ops import half


def test_half_is_deprecated():
    pytest.deprecated_call(lambda: half(4))
"""


@pytest.mark.slow
def test_a_fix_tested_only_by_its_warning_says_another_warned_alike(tmp_path: Path) -> None:
    """``half`` warned already (through a helper it calls): the test of the fix's own
    deprecation passes before it."""
    repo = RepositoryBuilder(tmp_path / "repo")
    legacy = (
        "import warnings\n\n\ndef _legacy(x):\n"
        "    warnings.warn('floats are old', DeprecationWarning)\n    return x\n\n\n"
    )
    repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "calc"\n',
            "src/calc/__init__.py": "",
            "src/calc/ops.py": legacy + "def half(x):\n    return _legacy(x) / 2\n",
            "tests/__init__.py": "",
        },
    )
    fix = repo.commit(
        "Deprecate half",
        {
            "src/calc/ops.py": legacy + "def half(x):\n"
            "    warnings.warn('use x / 2', DeprecationWarning)\n    return _legacy(x) / 2\n",
            "tests/test_half.py": WARNED,
        },
    )
    oracle = ground_truth(calc_settings(repo.path)).root[fix[:12]]
    assert oracle.status == "no-fail-to-pass"
    assert oracle.reason is not None
    assert oracle.reason.endswith(
        "; tests/test_half.py::test_half_is_deprecated cannot fail before the fix: it asserts "
        "nothing but that a block warns, and the block warned before the fix too: another "
        "warning of that kind satisfies it (the project's elsewhere, a library's, or the "
        "interpreter's: a Python newer than the fix's deprecates more)"
    )
