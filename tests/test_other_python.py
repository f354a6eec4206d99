"""Tests that cannot be collected because the standard library lacks a name their code
reads (Python 2's ``itertools.izip``; jsonschema's 2011 ``types.NoneType`` on Python 3.6)
say that the code was written for another Python, not only which dependency the
environment lacks. Real git, real pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.testing import RepositoryBuilder
from history import calc_settings, ground_truth

PAIRS = """\
def pairs(left, right):
    return list(zip(left, right)){fixed}
"""
TEST = """\
import itertools

from calc.pairs import pairs

zipped = itertools.izip


def test_pairs():
    assert pairs([1], [2]) == list(zipped([1], [2]))
"""


@pytest.mark.slow
def test_a_fix_for_another_python_says_so(tmp_path: Path) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "calc"\n',
            "src/calc/__init__.py": "",
            "src/calc/pairs.py": PAIRS.format(fixed="[:0]"),
        },
    )
    fix = repo.commit(
        "Fix pairs (#1)",
        {"src/calc/pairs.py": PAIRS.format(fixed=""), "tests/test_pairs.py": TEST},
    )
    oracle = ground_truth(calc_settings(repo.path)).root[fix[:12]]
    assert oracle.status == "environment-error"
    assert oracle.reason.endswith(
        "could not collect any test (tests/test_pairs.py: AttributeError: module 'itertools' "
        "has no attribute 'izip'): `itertools.izip` is a name of Python 2's standard library "
        "alone, so the code at this fix runs on Python 2 only, and bugbout runs tests on Python "
        "3.6 and later: this era cannot be reproduced"
    ), oracle.reason
