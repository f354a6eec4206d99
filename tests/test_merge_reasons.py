"""A merge whose first parent already passes the tests it brings says in its reason
which of two things git shows: its fix reached that branch before (here cherry-picked),
or the merge brings its branch's whole change and the tests pass without it. Real git,
real pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.testing import RepositoryBuilder
from history import calc_settings, ground_truth

FIXED = "def absval(x):\n    return -x if x < 0 else x\n"
SIGN = "def sign(x):\n    return -1 if x < 0 else 1\n"
TEST = "from calc.absval import absval\n\n\ndef test_negative():\n    assert absval(-2) == 2\n"


@pytest.mark.slow
def test_a_merge_whose_branch_had_its_fix_says_so(tmp_path: Path) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "calc"\n',
            "src/calc/__init__.py": "",
            "src/calc/absval.py": "def absval(x):\n    return x\n",
            "tests/__init__.py": "",
            "tests/test_zero.py": "from calc.absval import absval\n\n\n"
            "def test_zero():\n    assert absval(0) == 0\n",
        },
    )
    repo.branch("feature")
    fix = repo.commit("Fix absval of negative numbers", {"src/calc/absval.py": FIXED})
    repo.commit(
        "Test absval of negative numbers, add sign",
        {"tests/test_absval.py": TEST, "src/calc/sign.py": SIGN},
    )
    repo.switch("main")
    repo.git("cherry-pick", fix)
    repo.commit("Document absval", {"README.md": "absval\n"})
    merge = repo.merge("feature", "Merge pull request #6 from dev/feature\n\nFix absval (#5)")
    oracle = ground_truth(calc_settings(repo.path)).root[merge[:12]]
    assert oracle.status == "no-fail-to-pass"
    assert oracle.reason is not None
    second = repo.git("rev-parse", f"{merge}^2").strip()
    assert oracle.reason.endswith(
        f"; the fix is a merge (of {second[:12]}): the branch it merges into (its first "
        "parent) passes the tests it brings already, so what they check was there before "
        "the merge"
    )


@pytest.mark.slow
def test_a_merge_that_brings_its_whole_change_says_so(tmp_path: Path) -> None:
    """Its first parent had none of the branch's change: the note does not say the change
    was merged before (marshmallow: every merge of its history whose tests passed before
    it brought its branch whole)."""
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "calc"\n',
            "src/calc/__init__.py": "",
            "src/calc/absval.py": FIXED,
            "tests/__init__.py": "",
        },
    )
    repo.branch("tidy")
    repo.commit(
        "Use abs, test negatives",
        {"src/calc/absval.py": "def absval(x):\n    return abs(x)\n", "tests/test_absval.py": TEST},
    )
    repo.switch("main")
    repo.commit("Document absval", {"README.md": "absval\n"})
    merge = repo.merge("tidy", "Merge pull request #7 from dev/tidy\n\nFix the style of absval")
    oracle = ground_truth(calc_settings(repo.path)).root[merge[:12]]
    assert oracle.status == "no-fail-to-pass"
    assert oracle.reason is not None
    second = repo.git("rev-parse", f"{merge}^2").strip()
    assert oracle.reason.endswith(
        f"; the fix is a merge (of {second[:12]}) that brings its branch's whole change to "
        "the code, none of which its first parent had before: its tests pass without that "
        "change, not because it was merged earlier"
    )
