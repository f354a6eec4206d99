"""pytest's cache stays out of the tree without being switched off where pytest can move
it: a plugin that reads ``config.cache`` as it configures (pytest-randomly 3.5, structlog
2020-2021) runs; a pytest too old to move it runs without it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bugbout.core.plumbing.pytest_era import PytestEra
from old_pytests import old_pytest
from test_pytest_eras import HOST, write

CONFTEST = """
def pytest_configure(config):
    config.cache.set("seed/last", 42)
"""


def _pytest(python: str, options: list[str], tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, "-m", "pytest", "-q", *options, "tests"],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
    )


def test_a_plugin_that_reads_the_cache_runs_and_the_tree_stays_clean(tmp_path: Path) -> None:
    tree = write(
        tmp_path / "tree",
        {"conftest.py": CONFTEST, "tests/test_it.py": "def test_it():\n    pass\n"},
    )
    home = tmp_path / "home"
    done = _pytest(HOST, PytestEra((9, 0)).cache(home), tree)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (tree / ".pytest_cache").exists()
    assert (home / ".pytest_cache" / "v" / "seed" / "last").read_text() == "42"


@pytest.mark.slow
def test_a_pytest_that_cannot_move_its_cache_runs_without_it(tmp_path: Path) -> None:
    tree = write(tmp_path / "tree", {"tests/test_it.py": "def test_it():\n    pass\n"})
    done = _pytest(str(old_pytest("3.0.7")), PytestEra((3, 0)).cache(tmp_path / "home"), tree)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (tree / ".cache").exists()
    assert not (tmp_path / "home").exists()
