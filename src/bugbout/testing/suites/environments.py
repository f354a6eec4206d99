"""The conformance suite of environment builders."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any, ClassVar

import pytest

from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import Command, EnvironmentRequest
from bugbout.testing.suites.base import PluginSuite

TIMEOUT = 600.0

_TEST_PATHS = """\
import shadow
import tiny
from extra_helper import HELPER


def test_the_tree_and_the_extra_paths_import():
    assert tiny.VALUE == 42
    assert HELPER == "first"


def test_extra_paths_come_before_the_tree():
    assert shadow.WHERE == "extra"
"""


def tiny_tree(root: Path) -> Path:
    """A src-layout project ``tiny`` whose ``pyproject.toml`` declares nothing (no Python
    version, no dependencies), with one test module."""
    tree = root / "tree"
    (tree / "src" / "tiny").mkdir(parents=True)
    (tree / "tests").mkdir()
    (tree / "pyproject.toml").write_text('[project]\nname = "tiny"\nversion = "0"\n')
    (tree / "src" / "tiny" / "__init__.py").write_text("VALUE = 42\n")
    (tree / "src" / "shadow.py").write_text('WHERE = "tree"\n')
    (tree / "tests" / "test_paths.py").write_text(_TEST_PATHS)
    return tree


def run(command: Command, home: Path) -> subprocess.CompletedProcess[str]:
    """``command`` run as bugbout runs tests: a small environment plus the command's own."""
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": str(home),
        "TMPDIR": str(home),
        "PYTHONDONTWRITEBYTECODE": "1",
        **command.env,
    }
    return subprocess.run(
        command.argv,
        cwd=command.cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        stdin=subprocess.DEVNULL,
    )


class EnvironmentSuite(PluginSuite):
    """Contract tests for an environment builder (``bugbout_environments``).

    ``build(request)`` on a tiny project returns an environment with a ``description``
    and a ``key`` that a second build repeats; its ``command(args, tree, extra_paths)``
    runs ``python -m pytest <args>`` in the tree, with the tree's package importable and
    the extra paths before the tree's own entries.
    """

    kind: ClassVar[str] = "environment"
    date: ClassVar[str | None] = None
    """The fix date the request carries (``None``: the newest dependencies)."""

    @pytest.fixture
    def tree(self, tmp_path: Path) -> Path:
        return tiny_tree(tmp_path)

    @pytest.fixture
    def request_for_tree(self, tree: Path, tmp_path: Path) -> EnvironmentRequest:
        home = tmp_path / "bugbout-home"
        home.mkdir(exist_ok=True)
        return EnvironmentRequest(
            project=ProjectSettings(source="src/tiny", tests="tests"),
            tree=tree,
            date=self.date,
            home=home,
        )

    @pytest.fixture
    def environment(self, plugin_under_test: Any, request_for_tree: EnvironmentRequest) -> Any:
        return plugin_under_test.build(request_for_tree)

    @pytest.fixture
    def scratch_home(self, tmp_path: Path) -> Path:
        home = tmp_path / "run-home"
        home.mkdir()
        return home

    def test_describes_itself(self, environment: Any) -> None:
        assert isinstance(environment.description, str)
        assert environment.description.strip()
        assert "\n" not in environment.description
        assert isinstance(environment.key, str)
        assert environment.key

    def test_a_second_build_has_the_same_key(
        self,
        plugins: Any,
        plugin_under_test: Any,
        environment: Any,
        request_for_tree: EnvironmentRequest,
    ) -> None:
        assert plugin_under_test.build(request_for_tree).key == environment.key
        fresh = plugins.create(self.kind, self.plugin, dict(self.options))
        assert fresh.build(request_for_tree).key == environment.key

    def test_command_runs_pytest_in_the_tree(
        self, environment: Any, tree: Path, scratch_home: Path
    ) -> None:
        command = environment.command(["--version"], tree, [])
        assert isinstance(command, Command)
        assert command.argv
        assert all(isinstance(part, str) for part in command.argv)
        assert Path(command.cwd) == tree
        result = run(command, scratch_home)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "pytest" in result.stdout + result.stderr

    def test_the_tree_and_extra_paths_import(
        self, environment: Any, tree: Path, tmp_path: Path, scratch_home: Path
    ) -> None:
        first, second = tmp_path / "extra-first", tmp_path / "extra-second"
        for directory, where in ((first, "first"), (second, "second")):
            directory.mkdir()
            (directory / "extra_helper.py").write_text(f"HELPER = {where!r}\n")
        (first / "shadow.py").write_text('WHERE = "extra"\n')
        command = environment.command(
            ["-p", "no:cacheprovider", "-q", "tests/test_paths.py"], tree, [first, second]
        )
        result = run(command, scratch_home)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "2 passed" in result.stdout
