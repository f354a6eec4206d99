"""A fix whose tests skip themselves after it gets no fail-to-pass test: its reason
quotes pytest's own reason for each skip (a ``skipif`` mark's, a ``pytest.skip`` call's),
read from the runs, which keep every skipped test's reason. Real git, real pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.testing import RepositoryBuilder
from history import calc_settings, ground_truth

SKIPPING = """\
import importlib.util

import pytest

from calc.ops import half


@pytest.mark.skipif(importlib.util.find_spec("json") is not None, reason="Needs missing json.")
def test_half_without_json():
    assert half(3) == 1.5


def test_half_of_text():
    pytest.skip("text is for later")
"""


@pytest.mark.slow
def test_a_fix_whose_tests_skip_themselves_quotes_pytests_reasons(tmp_path: Path) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "calc"\n',
            "src/calc/__init__.py": "",
            "src/calc/ops.py": "def half(x):\n    return x // 2\n",
            "tests/__init__.py": "",
        },
    )
    fix = repo.commit(
        "Fix half of odd numbers (#4)",
        {"src/calc/ops.py": "def half(x):\n    return x / 2\n", "tests/test_half.py": SKIPPING},
    )
    oracle = ground_truth(calc_settings(repo.path)).root[fix[:12]]
    assert oracle.status == "no-fail-to-pass"
    after = oracle.runs[-1]
    assert after.skips == {
        "tests/test_half.py::test_half_without_json": "Needs missing json.",
        "tests/test_half.py::test_half_of_text": "text is for later",
    }
    assert oracle.reason is not None
    assert oracle.reason.startswith(
        "no test failed before the fix and passed after it: the 2 tests the fix added or "
        "changed (tests/test_half.py::test_half_without_json, tests/test_half.py::"
        "test_half_of_text) skipped themselves after the fix, saying 'Needs missing json.'; "
        "'text is for later': their skip conditions hold in this environment, so nothing "
        "they check ran"
    )
