"""A fix whose tests' own helpers (a ``conftest.py``, a module it imports) use what only
the fix adds: without the fix no test can even start, as when a test module cannot be
collected, so every test errors before the fix. Real git, real pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.testing import RepositoryBuilder
from history import calc_settings, ground_truth

TEST = """\
from tests.helpers import SQUARE


def test_square():
    assert SQUARE(3) == 9
"""


@pytest.mark.slow
def test_a_helper_that_needs_the_fix_makes_every_test_fail_before_it(tmp_path: Path) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "calc"\n',
            "src/calc/__init__.py": "",
            "src/calc/ops.py": "def double(x):\n    return 2 * x\n",
            "tests/__init__.py": "",
            "tests/conftest.py": "import tests.helpers\n",
            "tests/helpers.py": "",
            "tests/test_double.py": "from calc.ops import double\n\n\n"
            "def test_double():\n    assert double(2) == 4\n",
        },
    )
    fix = repo.commit(
        "Add square (#1)",
        {
            "src/calc/ops.py": "def double(x):\n    return 2 * x\n\n\n"
            "def square(x):\n    return x * x\n",
            "tests/helpers.py": "from calc.ops import square as SQUARE\n",
            "tests/test_square.py": TEST,
        },
    )
    settings = calc_settings(repo.path)
    oracle = ground_truth(settings).root[fix[:12]]
    assert oracle.status == "ok", oracle.reason
    assert oracle.fail_to_pass == ["tests/test_square.py::test_square"]
