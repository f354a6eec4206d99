"""Shared fixtures: a fresh plugin registry, the synthetic history (history.py has the
settings for it)."""

from __future__ import annotations

from pathlib import Path

import pytest

import history
from bugbout.core.manager import Plugins, make_plugins


@pytest.fixture
def plugins() -> Plugins:
    """Only the built-in plugins: nothing installed on the machine leaks in."""
    return make_plugins(entry_points=False)


@pytest.fixture(scope="session")
def calc_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The synthetic history (built once): its path and each scenario's sha."""
    path = tmp_path_factory.mktemp("calc") / "repo"
    return path, history.build(path)


@pytest.fixture(autouse=True)
def _bugbout_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keep environments and scratch trees out of the user's cache, shared per session."""
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path_factory.getbasetemp() / "bugbout-home"))
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
