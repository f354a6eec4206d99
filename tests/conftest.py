"""Shared fixtures: a fresh plugin registry, the synthetic history (history.py has the
settings for it), and those the split test modules share (at the end)."""

from __future__ import annotations

import compileall
import contextlib
import importlib
import json
import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pluggy
import pytest

import components
import history
import report_records
from bugbout.core.contract import hookspecs
from bugbout.core.contract.manager import Plugins, make_plugins
from bugbout.core.plumbing.trees.checkout import Checkouts
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.report.report import Report
from bugbout.core.report.report_build import build_report
from bugbout.plugins.sandboxes.bubblewrap import Bubblewrap
from bugbout.plugins.sandboxes.seatbelt import Seatbelt
from bugbout.sandbox.identity import closed_folders, confined_owner
from bugbout.testing import RepositoryBuilder
from bugbout.testing.model_server import ModelServer
from cli_runs import bugbout
from egress_support import Echo, serving
from judge_matrices import JUDGE_MODULES
from model_requests import SCRIPT
from one_bug import AGENTS, one_bug_repository, write_agent
from patch_trees import FILES
from probe_plugins import ProbePlugins
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
    if not hasattr(config, "workerinput"):  # once, in the process that starts the workers
        # bugbout's bytecode, as an installed package has it: the suite starts hundreds
        # of processes that import bugbout (its command line, Ray workers), and where
        # PYTHONDONTWRITEBYTECODE is set each would compile its sources again
        compileall.compile_dir(importlib.import_module("bugbout").__path__[0], quiet=1)
    if confined_owner() is not None:
        _enterable_temporary_folders()


def _enterable_temporary_folders() -> None:
    """As root, confined processes run as nobody, who may enter a user's folders (mode
    755, 711) but not pytest's temporary ones, made owner-only: the tests' folders, and
    the folders above them, are made enterable (not listable), as a user's would be."""
    made = pytest.TempPathFactory.mktemp

    def mktemp(self: pytest.TempPathFactory, basename: str, numbered: bool = True) -> Path:
        path = made(self, basename, numbered)
        for folder in (path, *path.parents):
            if folder in (Path(tempfile.gettempdir()), Path("/")):
                break
            folder.chmod(folder.stat().st_mode | 0o111)
        return path

    pytest.TempPathFactory.mktemp = mktemp  # type: ignore[method-assign]


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
    """Where the world is built: outside the places a sandbox hides, and in folders the
    user a confined process runs as may enter (as root: not in root's HOME)."""
    owner = confined_owner()
    candidates = (Path.home() / ".cache" / "bugbout-tests", Path.cwd() / ".bugbout-tests")
    if owner is not None:
        candidates = (*candidates, Path("/var/cache/bugbout-tests"))
    for candidate in candidates:
        real = Path(os.path.realpath(candidate))
        if any(real.is_relative_to(hidden) for hidden in HIDDEN_ANYWAY):
            continue
        if owner is not None and closed_folders([real / "world"], owner):
            continue
        try:
            real.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        return real
    pytest.skip("no writable directory outside the temporary directories to build the world in")


@pytest.fixture
def world() -> Iterator[World]:
    for _ in range(10):  # another worker's world may remove the base when it empties it
        base = _visible_base()
        with contextlib.suppress(FileNotFoundError):
            root = Path(tempfile.mkdtemp(prefix="sandbox-", dir=base))
            root.chmod(0o755)  # a machine's folders: what hides a secret is the masks
            break
    else:
        pytest.fail(f"{base} kept disappearing")
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


# -- reports, the race, patches, the command line, plugins and judges ---------------------


# the report tests (test_report_*.py, test_reporters.py): built once per process, as pytest-xdist
# runs them; nothing changes a report
@pytest.fixture(scope="session")
def report() -> Report:
    """The report of the hand-made bout in report_records.py."""
    return build_report(**report_records.records())


@pytest.fixture(scope="session")
def evidence() -> Report:
    """That report with evidence on its task pages (report_records.evidence_records)."""
    fixes = {report_records.T1: report_records.HOSTILE_PATCH}
    return build_report(**report_records.evidence_records(), fixes=fixes)  # type: ignore[arg-type]


# the race tests (test_race*.py)
@pytest.fixture
def bout_repo(tmp_path: Path) -> Path:
    """A one-bug repository with contestants defined in its bugbout.yaml."""
    repo = one_bug_repository(tmp_path / "repo")
    agents = tmp_path / "agents"
    agents.mkdir()
    contestants = {
        name: {
            "agent": "command",
            "command": [sys.executable, str(write_agent(agents, name, source))],
        }
        for name, source in AGENTS.items()
    }
    config = {
        "defaults": ["base", "_self_"],
        "project": {"source": "src/mid", "tests": "tests"},
        "issue-sources": {"github": None, "file": None},
        "run": {"timeout": 5, "quotas": {"command": 4}},
        "contestants": contestants,
    }
    (repo.path / "bugbout.yaml").write_text(json.dumps(config))
    return repo.path


# the patch tests (test_patch_*.py)
@pytest.fixture
def repository(tmp_path: Path) -> tuple[RepositoryBuilder, str]:
    """The patch tests' repository (patch_trees.FILES, a binary file, a script, symlinks)
    and its commit."""
    path = tmp_path / "repo"
    repo = RepositoryBuilder(path)
    repo.write(FILES)
    (path / "src/pkg/logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0" + bytes(range(256)) * 8)
    (path / "src/pkg/latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    script = path / "scripts/run"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho run\n")
    script.chmod(0o755)
    (path / "docs/readme.md").symlink_to("../README.md")
    (path / "docs/old-link.md").symlink_to("index.md")
    (path / "src/pkg/alias.py").symlink_to("core.py")
    return repo, repo.commit("Initial")


@pytest.fixture
def checkouts(tmp_path: Path, repository: tuple[RepositoryBuilder, str]) -> Checkouts:
    return Checkouts(Git(repository[0].path), tmp_path / "cache")


@pytest.fixture
def trees(
    tmp_path: Path, checkouts: Checkouts, repository: tuple[RepositoryBuilder, str]
) -> tuple[Path, Path]:
    """The base tree and a working copy of it."""
    sha = repository[1]
    return checkouts.base(sha), checkouts.working_copy(sha, tmp_path / "work")


# the command-line tests (test_cli*.py)
@pytest.fixture
def repo(calc_repo: tuple[Path, dict[str, str]], tmp_path: Path) -> Path:
    """A fresh copy of the synthetic history, without any bugbout files."""
    source, _ = calc_repo
    target = tmp_path / "calc"
    shutil.copytree(source, target)
    return target


@pytest.fixture
def initialised(repo: Path) -> Path:
    """That copy after ``bugbout init``."""
    result = bugbout("init", cwd=repo)
    assert result.returncode == 0, result.stderr
    return repo


# the plugin tests (test_plugins.py, test_plugin_errors.py, test_assignment_plugins.py)
@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory on ``sys.path`` (and on ``PYTHONPATH`` for subprocesses)."""
    directory = tmp_path / "site"
    directory.mkdir()
    monkeypatch.syspath_prepend(str(directory))
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join([str(directory), os.environ.get("PYTHONPATH", "")])
    )
    return directory


# the judge tests (test_judges.py, test_judge_policies.py): nothing changes the registry
@pytest.fixture(scope="session")
def judges() -> Plugins:
    """Only the judge modules, registered by hand as ``make_plugins`` registers built-ins."""
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    plugins = Plugins(pm)
    for module in JUDGE_MODULES:
        imported = importlib.import_module(f"bugbout.plugins.judges.{module}")
        plugins.register(imported, name=imported.__name__, distribution="bugbout")
    plugins.check_pending()
    assert not plugins.problems
    return plugins


# the plugin-selection tests (test_selection.py, test_agent_selection.py)
@pytest.fixture
def probes() -> Plugins:
    """The built-in plugins and a third-party distribution with a ``probe`` of every kind."""
    plugins = make_plugins(entry_points=False)
    plugins.register(ProbePlugins(), name="probes", distribution="bugbout-probes")
    return plugins


@pytest.fixture
def composed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every composition of the settings Hydra makes, by config name."""
    from hydra._internal.config_loader_impl import ConfigLoaderImpl

    seen: list[str] = []
    real = ConfigLoaderImpl.load_configuration

    def spy(self: ConfigLoaderImpl, config_name: str | None, *args: Any, **kwargs: Any) -> Any:
        seen.append(str(config_name))
        return real(self, config_name, *args, **kwargs)

    monkeypatch.setattr(ConfigLoaderImpl, "load_configuration", spy)
    return seen
