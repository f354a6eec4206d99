"""pytest fixtures for plugin authors: a fresh plugin manager, inline plugins, synthetic
repositories with fix commits, the scripted model server and a private ``BUGBOUT_HOME``.

Load them in your ``conftest.py`` (bugbout does not register them globally)::

    pytest_plugins = ["bugbout.testing.fixtures"]

and use them in tests::

    def test_my_judge_is_registered(bugbout_plugins, register_plugin):
        register_plugin(my_plugin_module)
        assert "cautious" in bugbout_plugins.of_kind("judge")

The fixtures:

``bugbout_plugins``
    A fresh :class:`~bugbout.core.contract.manager.Plugins` with the built-in plugins only: no
    entry point is loaded, so nothing installed on the machine leaks in.
``register_plugin``
    ``register_plugin(obj, name=None) -> str``: registers a plugin module or object into
    ``bugbout_plugins`` for one test (unregistered at teardown). A plugin that bugbout
    skips (a misspelt hook, a hook that raises, a record of the wrong kind) is an error
    naming the problem, not a silently missing plugin.
``make_repository``
    ``make_repository(name="repo") -> RepositoryBuilder``: an empty git repository under
    the test's ``tmp_path``, whose commits the test writes one by one.
``fixed_bug_repository``
    A :class:`FixedBugRepository`: a small package (``src/shapes``) with one fix commit
    that names issue #12 and adds a test, ready to mine (the conformance suites use it).
``model_server``
    ``model_server(script) -> ModelServer``: the scripted model server, started; stopped
    at teardown. ``script`` is a :class:`~bugbout.testing.model_server.Script` or a list
    of :class:`~bugbout.testing.model_server.Shell` / ``Say`` steps.
``bugbout_home``
    A private, empty ``BUGBOUT_HOME`` (set in the environment for the test); its path.

Nothing here is built at import: every fixture builds its value when a test asks for it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bugbout.core.contract.errors import PluginError
from bugbout.core.contract.manager import Plugins, make_plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.mine.mining import MiningRequest
from bugbout.testing.model_server import ModelServer, Script, Step
from bugbout.testing.repository import RepositoryBuilder

__all__ = [
    "FIXED_BUG_ISSUE",
    "FixedBugRepository",
    "bugbout_home",
    "bugbout_plugins",
    "build_fixed_bug_repository",
    "fixed_bug_repository",
    "make_repository",
    "model_server",
    "register_plugin",
]

if "bugbout.testing.suites" not in sys.modules:
    # Loaded from a conftest, before any test module imports the suites: pytest rewrites
    # their asserts, so that a failing contract test shows the values it compared.
    pytest.register_assert_rewrite("bugbout.testing.suites")

RegisterPlugin = Callable[..., str]
MakeRepository = Callable[..., RepositoryBuilder]
StartModelServer = Callable[[Script | Iterable[Step]], ModelServer]


# -- the fixed-bug repository ---------------------------------------------------------------

FIXED_BUG_ISSUE = 12
"""The issue the fixed-bug repository's fix names."""

_AREA = """\
import math


def square(side):
    return side * side


def circle(radius):
    return math.pi * radius * radius


def ratio(shape, reference):
    return shape / reference
"""

_AREA_FIXED = _AREA.replace(
    "def ratio(shape, reference):\n    return shape / reference\n",
    "def ratio(shape, reference):\n"
    "    if reference == 0:\n"
    "        return 0.0\n"
    "    return shape / reference\n",
)

_TEST_AREA = """\
from shapes.area import circle, ratio, square


def test_square():
    assert square(3) == 9


def test_circle():
    assert round(circle(1), 2) == 3.14


def test_ratio():
    assert ratio(square(2), square(1)) == 4
"""

_TEST_RATIO = """\
from shapes.area import ratio


def test_ratio_of_nothing_is_zero():
    assert ratio(5, 0) == 0.0
"""

_ISSUES = [
    {
        "number": FIXED_BUG_ISSUE,
        "title": "ratio() crashes when the reference area is zero",
        "body": "`ratio(5, 0)` raises ZeroDivisionError; it should return 0.0.",
    }
]


@dataclass(frozen=True)
class FixedBugRepository:
    """A synthetic repository with one replayable fix.

    Its history, oldest first:

    1. ``Initial commit``: the ``shapes`` package (``src/shapes``), its tests
       (``tests/test_area.py``), a ``pyproject.toml`` and ``issues.json`` (the issues, as
       the ``file`` issue source reads them);
    2. ``Document the shapes``: a README only (not a fix);
    3. ``Fix crash in ratio() when the reference is zero (#12)``: changes
       ``src/shapes/area.py`` and adds ``tests/test_ratio.py``, whose test fails before
       the fix and passes after it.
    """

    builder: RepositoryBuilder
    fix: str
    """The fix commit's sha."""
    parent: str
    """The fix commit's parent: the unfixed code."""
    issue: int = FIXED_BUG_ISSUE
    source: str = "src/shapes"
    tests: str = "tests"
    fix_title: str = f"Fix crash in ratio() when the reference is zero (#{FIXED_BUG_ISSUE})"
    issues_file: str = "issues.json"
    test_file: str = "tests/test_ratio.py"
    """The test module the fix adds."""
    added_test: str = "tests/test_ratio.py::test_ratio_of_nothing_is_zero"

    @property
    def path(self) -> Path:
        return self.builder.path

    def project(self) -> ProjectSettings:
        """The ``project:`` settings for this repository."""
        return ProjectSettings(source=self.source, tests=self.tests)

    def mining_request(self) -> MiningRequest:
        """What a miner is asked to mine this repository."""
        return MiningRequest(repository=self.path, project=self.project())


def build_fixed_bug_repository(path: Path) -> FixedBugRepository:
    """Build the :class:`FixedBugRepository` at ``path`` (a new directory)."""
    builder = RepositoryBuilder(path)
    builder.commit(
        "Initial commit",
        {
            "pyproject.toml": '[project]\nname = "shapes"\nversion = "1.0"\n',
            "src/shapes/__init__.py": "",
            "src/shapes/area.py": _AREA,
            "tests/test_area.py": _TEST_AREA,
            "issues.json": json.dumps(_ISSUES, indent=2) + "\n",
        },
    )
    parent = builder.commit("Document the shapes", {"README.md": "# shapes\n\nAreas.\n"})
    fix = builder.commit(
        f"Fix crash in ratio() when the reference is zero (#{FIXED_BUG_ISSUE})\n\n"
        "A zero reference area now gives a ratio of 0.0.",
        {"src/shapes/area.py": _AREA_FIXED, "tests/test_ratio.py": _TEST_RATIO},
    )
    return FixedBugRepository(builder=builder, fix=fix, parent=parent)


# -- fixtures ---------------------------------------------------------------------------------


@pytest.fixture
def bugbout_plugins() -> Plugins:
    """A fresh plugin manager with the built-in plugins only (no entry points)."""
    return make_plugins(entry_points=False)


@pytest.fixture
def register_plugin(bugbout_plugins: Plugins) -> Iterator[RegisterPlugin]:
    """``register_plugin(obj, name=None) -> str``: register ``obj`` (a plugin module or
    object) into ``bugbout_plugins`` for this test; unregistered at teardown."""
    registered: list[str] = []

    def register(plugin: object, name: str | None = None) -> str:
        before = len(bugbout_plugins.problems)
        found = bugbout_plugins.register(plugin, name=name)
        if found is not None:
            registered.append(found)
            bugbout_plugins.check_pending()
            bugbout_plugins.all()  # collect its records now: a broken hook is reported
        problems = bugbout_plugins.problems[before:]
        if found is None or problems:
            if found is not None and found in bugbout_plugins.distributions:
                bugbout_plugins.unregister(found)
            raise PluginError("; ".join(problems) or f"plugin {name or plugin!r} was skipped")
        return found

    yield register
    for name in reversed(registered):
        if name in bugbout_plugins.distributions:
            bugbout_plugins.unregister(name)


@pytest.fixture
def make_repository(tmp_path: Path) -> MakeRepository:
    """``make_repository(name="repo") -> RepositoryBuilder``: a new git repository in
    ``tmp_path / name``."""

    def make(name: str = "repo", *, branch: str = "main") -> RepositoryBuilder:
        path = tmp_path / name
        if path.exists():
            raise FileExistsError(f"{path} exists: give each repository its own name")
        return RepositoryBuilder(path, branch=branch)

    return make


@pytest.fixture
def fixed_bug_repository(tmp_path: Path) -> FixedBugRepository:
    """A small package with one fix commit that names issue #12 and adds a test."""
    return build_fixed_bug_repository(tmp_path / "fixed-bug")


@pytest.fixture
def model_server() -> Iterator[StartModelServer]:
    """``model_server(script) -> ModelServer``: a started scripted model server, stopped at
    teardown."""
    servers: list[ModelServer] = []

    def start(script: Script | Iterable[Step]) -> ModelServer:
        server = ModelServer(script).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def bugbout_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private, empty ``BUGBOUT_HOME``, set in the environment for the test."""
    home = tmp_path / "bugbout-home"
    home.mkdir()
    monkeypatch.setenv("BUGBOUT_HOME", str(home))
    return home
