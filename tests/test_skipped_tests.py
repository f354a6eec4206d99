"""A fix whose added test skips itself here (attrs f7fa5a810c4c, 2022: its test runs the
pyright program, which the machine lacks) says so, not only "no fail-to-pass". Real git,
real pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.testing import RepositoryBuilder
from history import calc_settings, ground_truth

SHOUT = """\
def shout(text):
    return text.upper(){fixed}
"""
TEST = """\
import shutil

import pytest

from calc.shout import shout


@pytest.mark.skipif(shutil.which("no-such-checker") is None, reason="needs no-such-checker")
def test_shout_checked():
    assert shout("a") == "A!"
"""


@pytest.mark.slow
def test_a_fix_whose_test_skips_itself_says_so(tmp_path: Path) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "calc"\n',
            "src/calc/__init__.py": "",
            "src/calc/shout.py": SHOUT.format(fixed=""),
        },
    )
    fix = repo.commit(
        "Fix shout (#1)",
        {"src/calc/shout.py": SHOUT.format(fixed=' + "!"'), "tests/test_shout.py": TEST},
    )
    oracle = ground_truth(calc_settings(repo.path)).root[fix[:12]]
    assert oracle.status == "no-fail-to-pass"
    assert oracle.reason == (
        "no test failed before the fix and passed after it: the test the fix added or changed "
        "(tests/test_shout.py::test_shout_checked) skipped itself after the fix, saying "
        "'needs no-such-checker': its skip condition holds in this environment, so nothing "
        "it checks ran"
    ), oracle.reason
