"""Shared fixtures: a fresh plugin registry, the synthetic history (history.py has the
settings for it)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import components
import history
from bugbout.core.contract.manager import Plugins, make_plugins
from bugbout.plugins.sandboxes.bubblewrap import Bubblewrap
from bugbout.plugins.sandboxes.seatbelt import Seatbelt
from bugbout.testing.model_server import ModelServer
from egress_support import Echo, serving
from model_requests import SCRIPT
from sandbox_world import World, _make


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


# == Fixtures shared by the modules of one concern that a long test module was split into


# -- the sandboxes' world under attack (tests/test_sandbox_*.py; helpers: sandbox_world.py) ---

HIDDEN_ANYWAY = ("/tmp", "/var/tmp", "/run", "/dev", "/proc", "/private/tmp", "/private/var")
"""Places a sandbox hides or lets write on its own: the attacked world must not be there."""


def _visible_base() -> Path:
    for candidate in (Path.home() / ".cache" / "bugbout-tests", Path.cwd() / ".bugbout-tests"):
        real = Path(os.path.realpath(candidate))
        if any(real.is_relative_to(hidden) for hidden in HIDDEN_ANYWAY):
            continue
        try:
            real.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        return real
    pytest.skip("no writable directory outside the temporary directories to build the world in")


@pytest.fixture
def world() -> Iterator[World]:
    base = _visible_base()
    root = Path(tempfile.mkdtemp(prefix="sandbox-", dir=base))
    marker = uuid.uuid4().hex
    bugbout_home = root / "bugbout-home"
    w = World(
        root=root,
        marker=marker,
        repo=root / "project",
        store=root / "project" / ".bugbout",
        bugbout_home=bugbout_home,
        workdir=bugbout_home / "attempts" / "t1" / "agent-a" / "work",
        logs=bugbout_home / "attempts" / "t1" / "agent-a" / "logs",
        other_attempt=bugbout_home / "attempts" / "t1" / "agent-b" / "work",
        credentials=bugbout_home / "credentials",
        test_env=bugbout_home / "environments" / "py311",
        home=root / "home",
        netrc=root / "netrc",
        outside=root / "outside",
    )
    files = {
        w.repo / ".git" / "secret": w.secret("repo"),
        w.repo / ".git" / "objects" / "fix": w.secret("fix"),
        w.repo / "src" / "calc.py": w.secret("repo-source"),
        w.store / "tasks.json": w.secret("store"),
        w.workdir / "calc.py": "checkout\n",
        w.other_attempt / "patch.diff": w.secret("other-agent"),
        w.credentials / "token": w.secret("credentials"),
        w.test_env / "lib.txt": "environment\n",
        w.home / ".ssh" / "id_ed25519": w.secret("ssh-key"),
        w.netrc: w.secret("netrc"),
        w.outside / "plain.txt": "visible\n",
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    w.logs.mkdir(parents=True)
    try:
        yield w
    finally:
        shutil.rmtree(root, ignore_errors=True)
        with contextlib.suppress(OSError):
            base.rmdir()


@pytest.fixture(params=["bubblewrap", "seatbelt"])
def sandbox(request: pytest.FixtureRequest) -> Bubblewrap | Seatbelt:
    return _make(request.param)


@pytest.fixture
def bwrap() -> Bubblewrap:
    sandbox = _make("bubblewrap")
    assert isinstance(sandbox, Bubblewrap)
    return sandbox


# -- the agent adapters (tests/test_agent_*.py; helpers: agent_sessions.py) ---------------

EXECUTABLES = ("codex", "claude", "gemini", "mini")


@pytest.fixture
def fake_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Stand-ins for the four CLIs first on PATH, so argv[0] is known and nothing runs."""
    directory = tmp_path / "bin"
    directory.mkdir()
    for name in EXECUTABLES:
        program = directory / name
        program.write_text("#!/bin/sh\nexit 0\n")
        program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{directory}{os.pathsep}{os.environ.get('PATH', '')}")
    return directory


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Every vendor's key, and a secret of nobody's, in the user's environment."""
    values = {
        "OPENAI_API_KEY": "sk-openai-user",
        "ANTHROPIC_API_KEY": "sk-ant-user",
        "GEMINI_API_KEY": "gemini-user",
        "OPENROUTER_API_KEY": "sk-or-user",
        "SECRET_TOKEN": "do-not-leak",
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CODEX_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    return values


# -- the scripted model server (tests/test_model_server_*.py; helpers: model_requests.py) ---


@pytest.fixture
def server() -> Any:
    with ModelServer(SCRIPT) as running:
        yield running


# -- egress (tests/test_egress_*.py; helpers: egress_support.py) --------------------------


@pytest.fixture
def echo() -> Iterator[Echo]:
    server = Echo()
    with serving(server):
        yield server


@pytest.fixture
def socket_dir() -> Iterator[Path]:
    """A short directory for the unix socket (``sun_path`` is short)."""
    with tempfile.TemporaryDirectory(prefix="bb-egress-") as path:
        yield Path(path)
