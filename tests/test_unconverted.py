"""A 2014 era whose tests import nose: nose 1.3.4 is a source distribution of Python 2
code that setuptools converted with ``use_2to3`` at build time, which today's setuptools
skips. The environment builds it again with the build tools of its era, and the fix gets
ground truth. Real git, real uv environments (PyPI as of the fix), real pytest of the era."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.plumbing.environments.interpreters import available_interpreters
from bugbout.testing import RepositoryBuilder
from history import dated_commit, offline_ground_truth

DAY = "2014-08-01T12:00:00+00:00"
SETUP = (
    "from setuptools import setup\nsetup(name='calc', packages=['calc'], tests_require=['nose'])\n"
)
TEST = """\
from nose.tools import eq_

from calc import double


def test_double():
    eq_(double(3), 6)
"""


@pytest.mark.slow
def test_a_use_2to3_test_dependency_is_built_as_its_era_built_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if "3.6" not in available_interpreters():
        pytest.fail("no Python 3.6 on this machine: `pyenv install 3.6`")
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "home"))
    repo = RepositoryBuilder(tmp_path / "repo")
    initial = {"setup.py": SETUP, "calc/__init__.py": "def double(x):\n    return x + 2\n"}
    dated_commit(repo, "Initial", initial, DAY)
    fixed = {"calc/__init__.py": "def double(x):\n    return x * 2\n", "tests/test_calc.py": TEST}
    fix = dated_commit(repo, "Fix double (#1)", fixed, DAY)
    oracle = offline_ground_truth(repo.path, "calc").root[fix[:12]]
    assert oracle.versions.get("nose") == "1.3.4", oracle.environment
    assert oracle.status == "ok", oracle.reason
    assert oracle.fail_to_pass == ["tests/test_calc.py::test_double"]
