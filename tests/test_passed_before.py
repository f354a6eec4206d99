"""A fix whose own tests pass before it too (a refactor that renames its tests) has no
fail-to-pass in its history: its reason says so, not only which unrelated tests failed on
both sides. Real git, real pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.testing import RepositoryBuilder
from history import calc_settings, ground_truth

SCALE = """\
def scale(value, factor):
    return {product}
"""
TEST = """\
from calc.scale import scale


def test_{name}():
    assert scale(2, 3) == 6


def test_unrelated():
    assert scale(1, 0.1) == 1  # fails before and after
"""


@pytest.mark.slow
def test_a_fix_whose_tests_passed_before_says_so(tmp_path: Path) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "calc"\n',
            "src/calc/__init__.py": "",
            "src/calc/scale.py": SCALE.format(product="value * factor"),
            "tests/test_scale.py": TEST.format(name="scale"),
        },
    )
    fix = repo.commit(
        "Fix scale: the factor first (#1)",
        {
            "src/calc/scale.py": SCALE.format(product="factor * value"),
            "tests/test_scale.py": TEST.format(name="scale_by_factor"),
        },
    )
    oracle = ground_truth(calc_settings(repo.path)).root[fix[:12]]
    assert oracle.status == "no-fail-to-pass"
    assert oracle.reason == (
        "no test failed before the fix and passed after it: the test the fix added or "
        "changed passed before it too: in this environment no test in its history fails without "
        "the fix"
    )
