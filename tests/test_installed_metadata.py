"""A package that asks for its own installed distribution when imported gets ground
truth: its runs find the dist-info installing it would have written. Real git, real uv
environments (PyPI as of the fix), real pytest of the era."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from bugbout.core.plumbing.project.dist_info import metadata_folder
from bugbout.testing import RepositoryBuilder
from history import dated_commit, offline_ground_truth

CALC = """\
import pkg_resources
from importlib.metadata import version

__version__ = pkg_resources.get_distribution(__name__).version
assert version("calc") == __version__


def double(x):
    return x {op} 2
"""
DAY = "2021-03-01T12:00:00+00:00"
TEST = """\
from calc import double


def test_double():
    assert double(3) == 6
"""


def test_the_dist_info_names_the_declared_project(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "setup.cfg").write_text("[metadata]\nname = my.calc\nversion = 1.2\n")
    folder = metadata_folder(tree, tmp_path / "dists")
    assert folder is not None
    metadata = folder / "my_calc-1.2.dist-info" / "METADATA"
    assert metadata.read_text().splitlines()[1:3] == ["Name: my.calc", "Version: 1.2"]
    assert metadata_folder(tree, tmp_path / "dists") == folder  # written once
    (tree / "setup.cfg").write_text("[metadata]\nname = my.calc\n")  # setuptools-scm's
    unversioned = metadata_folder(tree, tmp_path / "dists")
    assert unversioned is not None
    assert (unversioned / "my_calc-0.dist-info" / "METADATA").is_file()
    (tree / "src" / "my_calc").mkdir(parents=True)
    (tree / "src" / "my_calc" / "__init__.py").write_text('__version__ = "2.0.1"\n')
    packaged = metadata_folder(tree, tmp_path / "dists", sources=["src/my_calc"])
    assert packaged is not None
    assert (packaged / "my_calc-2.0.1.dist-info" / "METADATA").is_file()
    assert metadata_folder(tree, tmp_path / "dists", installed=["My_Calc==1.0"]) is None
    (tree / "setup.cfg").unlink()
    assert metadata_folder(tree, tmp_path / "dists") is None


PYPROJECT = """\
[project]
name = "structlog"
version = "22.2.0.dev0"
description = "Structured Logging for Python"
authors = [{name = "Hynek Schlawack", email = "hs@ox.cx"}, {name = "Someone"}]

[project.urls]
Documentation = "https://www.structlog.org/"
Changelog = "https://www.structlog.org/en/stable/changelog.html"
"""


@pytest.mark.parametrize(
    ("name", "text", "fields"),
    [
        (
            "pyproject.toml",
            PYPROJECT,
            {
                "Summary": ["Structured Logging for Python"],
                "Author": ["Someone"],
                "Author-email": ["Hynek Schlawack <hs@ox.cx>"],
                "Project-URL": [
                    "Documentation, https://www.structlog.org/",
                    "Changelog, https://www.structlog.org/en/stable/changelog.html",
                ],
            },
        ),
        (
            "setup.cfg",
            "[metadata]\nname = structlog\nversion = 1.0\ndescription = Structured\n"
            "  Logging\nauthor_email = hs@ox.cx\nurl = https://www.structlog.org/\n",
            {
                "Summary": ["Structured Logging"],
                "Author-email": ["hs@ox.cx"],
                "Home-page": ["https://www.structlog.org/"],
            },
        ),
    ],
    ids=["pyproject", "setup.cfg"],
)
def test_the_dist_info_holds_the_metadata_the_tree_declares(
    name: str, text: str, fields: dict[str, list[str]], tmp_path: Path
) -> None:
    """structlog 2022 read its ``__description__``, ``__email__`` and ``__uri__`` from its
    installed metadata: a build writes what the tree declares, and so does bugbout."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / name).write_text(text)
    folder = metadata_folder(tree, tmp_path / "dists")
    assert folder is not None
    [found] = importlib.metadata.distributions(name="structlog", path=[str(folder)])
    assert {key: found.metadata.get_all(key) for key in fields} == fields


@pytest.mark.slow
def test_a_package_that_reads_its_installed_version_gets_ground_truth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "home"))
    repo = RepositoryBuilder(tmp_path / "repo")
    setup = "from setuptools import setup\nsetup(name='calc', version='1.0', packages=['calc'])\n"
    files = {"setup.py": setup, "calc/__init__.py": CALC.format(op="+")}
    dated_commit(repo, "Initial", files, DAY)
    fixed = {"calc/__init__.py": CALC.format(op="*"), "tests/test_calc.py": TEST}
    fix = dated_commit(repo, "Fix double (#1)", fixed, DAY)
    oracle = offline_ground_truth(repo.path, "calc").root[fix[:12]]
    assert oracle.status == "ok", oracle.reason
    assert oracle.fail_to_pass == ["tests/test_calc.py::test_double"]
