"""A fix whose tests skip themselves in the environment has no fail-to-pass test: its
reason quotes the decorator they skipped by (more-itertools 2019: a test of Python 3.8's
``accumulate(initial=...)``, made before 3.8 came out, skips below 3.8). Real git, real
pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.testing import RepositoryBuilder
from history import calc_settings, ground_truth

ABSVAL = "def absval(x):\n    return x\n"
FIXED = "def absval(x):\n    return -x if x < 0 else x\n"
TEST = """\
import sys
from unittest import TestCase, skipIf

from calc.absval import absval


class AbsvalTests(TestCase):
    @skipIf(sys.version_info < (99,), 'needs Python 99')
    def test_negative(self):
        self.assertEqual(absval(-2), 2)
"""


@pytest.mark.slow
def test_a_fix_whose_test_skips_itself_quotes_its_skip(tmp_path: Path) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "calc"\n',
            "src/calc/__init__.py": "",
            "src/calc/absval.py": ABSVAL,
            "tests/__init__.py": "",
        },
    )
    fix = repo.commit(
        "Fix absval of negative numbers",
        {"src/calc/absval.py": FIXED, "tests/test_absval.py": TEST},
    )
    oracle = ground_truth(calc_settings(repo.path)).root[fix[:12]]
    assert oracle.status == "no-fail-to-pass"
    assert oracle.reason is not None
    assert oracle.reason.endswith(
        "so nothing it checks ran; it skipped by `skipIf(sys.version_info < (99,), "
        "'needs Python 99')` (tests/test_absval.py::AbsvalTests::test_negative)"
    )
