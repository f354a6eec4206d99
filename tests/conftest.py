"""Shared fixtures: a fresh plugin registry, the synthetic history (history.py has the
settings for it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import components
import history
from bugbout.core.contract.manager import Plugins, make_plugins


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


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--allow-skip",
        action="append",
        default=[],
        metavar="COMPONENT",
        help="let tests that need a missing component skip instead of failing: "
        f"{', '.join(components.INSTALL)} or all (repeatable)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "requires(component): the test needs a component of the machine"
    )


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker in item.iter_markers("requires"):
        component = marker.args[0]
        if not components.FOUND[component]():
            components.missing(component, f"{component} is not installed")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A missing component fails the test unless the run allows skipping it."""
    report = yield
    error = call.excinfo.value if call.excinfo else None
    if isinstance(error, components.Missing) and not components.allowed(
        item.config, error.component
    ):
        report.outcome = "failed"
        report.longrepr = components.failure(error.component, error.what)
    return report
