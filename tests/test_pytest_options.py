"""A project's addopts that leave tests out (``-m 'not stress'``) are carried into
``project.pytest-args`` by ``bugbout init``: bugbout ignores the rest of addopts, and
without them every test run of a bout would run the tests the project keeps out."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bugbout.core.plumbing.project.pytest_options import selecting_options
from bugbout.testing import RepositoryBuilder


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (
            "pyproject.toml",
            "[tool.pytest.ini_options]\n"
            "addopts = \"-ra --cov=pkg -m 'not stress' --ignore=tests/slow -kfast -p xdist\"\n",
        ),
        (
            "pyproject.toml",
            "[tool.pytest.ini_options]\n"
            'addopts = ["-ra", "--cov=pkg", "-m", "not stress", "--ignore", "tests/slow", '
            '"-k", "fast"]\n',
        ),
        ("pytest.ini", "[pytest]\naddopts = -ra -m 'not stress' --ignore=tests/slow -k fast\n"),
        ("tox.ini", "[pytest]\naddopts = -m 'not stress' --ignore tests/slow -k fast\n"),
        ("setup.cfg", "[tool:pytest]\naddopts = -m 'not stress' --ignore=tests/slow -k fast\n"),
    ],
)
def test_the_options_that_leave_tests_out_are_kept(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_text(text)
    found = selecting_options(tmp_path)
    assert found[:2] == ["-m", "not stress"]
    assert found[2:] in (
        ["--ignore=tests/slow", "-k", "fast"],
        ["--ignore", "tests/slow", "-k", "fast"],
    )


def test_pytest_ini_wins_and_a_pyproject_without_pytest_section_is_skipped(
    tmp_path: Path,
) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    (tmp_path / "setup.cfg").write_text("[tool:pytest]\naddopts = -m 'not slow'\n")
    assert selecting_options(tmp_path) == ["-m", "not slow"]
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -ra\n")
    assert selecting_options(tmp_path) == []


@pytest.mark.parametrize(
    "text",
    ["[tool.pytest.ini_options\n", '[tool.pytest.ini_options]\naddopts = "-m \'unclosed"\n'],
)
def test_an_unreadable_configuration_selects_nothing(tmp_path: Path, text: str) -> None:
    (tmp_path / "pyproject.toml").write_text(text)
    assert selecting_options(tmp_path) == []


@pytest.mark.slow
def test_init_writes_them_into_the_project_settings(tmp_path: Path) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial",
        {
            "src/pkg/__init__.py": "",
            "tests/test_pkg.py": "def test_ok():\n    pass\n",
            "pyproject.toml": "[tool.pytest.ini_options]\n"
            "addopts = \"-ra -m 'not stress'\"\nmarkers = ['stress: slow']\n",
        },
    )
    result = subprocess.run(
        [sys.executable, "-m", "bugbout", "init"],
        cwd=repo.path, capture_output=True, text=True, env=dict(os.environ), check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    settings = yaml.safe_load((repo.path / "bugbout.yaml").read_text())
    assert settings["project"]["pytest-args"] == ["-m", "not stress"]
