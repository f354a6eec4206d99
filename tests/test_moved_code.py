"""A fix that moves a function from one module of the package to another, with tests
that reach it through the package, has no fail-to-pass test: its reason names the move
(more-itertools 2020, `nth_product to more.py`). Real git, real pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.testing import RepositoryBuilder
from history import calc_settings, ground_truth

CLAMP = "def clamp(value, low, high):\n    return max(low, min(value, high))\n"
ABSVAL = "def absval(x):\n    return -x if x < 0 else x\n"
PACKAGE = "from calc.ops import *  # noqa\nfrom calc.recipes import *  # noqa\n"
TEST = "from calc import clamp\n\n\ndef test_clamp():\n    assert clamp(5, 0, 3) == 3\n"


@pytest.mark.slow
def test_a_fix_that_moves_a_function_names_the_move(tmp_path: Path) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "calc"\n',
            "src/calc/__init__.py": PACKAGE,
            "src/calc/ops.py": ABSVAL,
            "src/calc/recipes.py": CLAMP,
            "tests/__init__.py": "",
            "tests/test_ops.py": "from calc import absval\n\n\n"
            "def test_absval():\n    assert absval(-2) == 2\n",
        },
    )
    move = repo.commit(
        "clamp to ops.py",
        {
            "src/calc/ops.py": ABSVAL + "\n\n" + CLAMP,
            "src/calc/recipes.py": "",
            "tests/test_clamp.py": TEST,
        },
    )
    oracle = ground_truth(calc_settings(repo.path)).root[move[:12]]
    assert oracle.status == "no-fail-to-pass"
    assert oracle.reason is not None
    assert oracle.reason.endswith(
        "; the fix moves `clamp` from src/calc/recipes.py to src/calc/ops.py: the package "
        "held that code before the fix, so tests that reach it through the package pass "
        "without the fix"
    )


@pytest.mark.slow
def test_a_fix_that_moves_nothing_names_no_move(tmp_path: Path) -> None:
    """A function added to one module and another's function changed: no move."""
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "calc"\n',
            "src/calc/__init__.py": PACKAGE,
            "src/calc/ops.py": ABSVAL,
            "src/calc/recipes.py": CLAMP,
            "tests/__init__.py": "",
        },
    )
    added = repo.commit(
        "Add sign, tidy clamp",
        {
            "src/calc/ops.py": ABSVAL + "\n\ndef sign(x):\n    return -1 if x < 0 else 1\n",
            "src/calc/recipes.py": "def clamp(value, low, high):\n"
            "    return min(high, max(low, value))\n",
            "tests/test_clamp.py": TEST,
        },
    )
    oracle = ground_truth(calc_settings(repo.path)).root[added[:12]]
    assert oracle.status == "no-fail-to-pass"
    assert oracle.reason is not None
    assert "moves" not in oracle.reason
