"""A package that imports the version module its build writes (vcversioner's, as
jsonschema did in 2016-2018; setuptools-scm's ``write_to``) gets ground truth, and the
trees agents work on hold the module too. Real git, real pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.plumbing.trees.checkout import export
from bugbout.core.plumbing.trees.git import Git
from bugbout.testing import RepositoryBuilder
from history import calc_settings, ground_truth

SETUP = (
    "from setuptools import setup\n"
    "setup(name='calc', version='1.4', setup_requires=['vcversioner'],\n"
    "      vcversioner={'version_module_paths': ['src/calc/_version.py']})\n"
)
INIT = "from calc._version import __version__\n\n\ndef double(x):\n    return x {op} 2\n"
TEST = "from calc import double\n\n\ndef test_double():\n    assert double(3) == 6\n"


def _repository(path: Path) -> tuple[RepositoryBuilder, str]:
    repo = RepositoryBuilder(path)
    repo.commit(
        "Initial",
        {
            "setup.py": SETUP,
            ".gitignore": "src/calc/_version.py\n",
            "src/calc/__init__.py": INIT.format(op="+"),
        },
    )
    fix = repo.commit(
        "Fix double (#1)",
        {"src/calc/__init__.py": INIT.format(op="*"), "tests/test_calc.py": TEST},
    )
    return repo, fix


def test_an_exported_tree_holds_the_version_module_its_build_writes(tmp_path: Path) -> None:
    repo, fix = _repository(tmp_path / "repo")
    tree = tmp_path / "tree"
    tree.mkdir()
    with Git(repo.path) as git:
        export(git, fix, tree)
    module = (tree / "src" / "calc" / "_version.py").read_text()
    assert "__version__ = version = '1.4'" in module


@pytest.mark.slow
def test_a_package_importing_its_built_version_module_gets_ground_truth(tmp_path: Path) -> None:
    repo, fix = _repository(tmp_path / "repo")
    settings = calc_settings(repo.path)
    oracle = ground_truth(settings).root[fix[:12]]
    assert oracle.status == "ok", oracle.reason
    assert oracle.fail_to_pass == ["tests/test_calc.py::test_double"]
