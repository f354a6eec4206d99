"""The conformance suite of test runners."""

from __future__ import annotations

import sys
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

import pytest

from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import Environment, EnvironmentRequest
from bugbout.core.plumbing.selection.affected import read_coverage
from bugbout.core.plumbing.testruns.test_runner import SEPARATOR, TestRunRequest, file_of
from bugbout.core.store.race_records import ChangeArea, ChangeKind, FileChange
from bugbout.core.store.records import Outcome, RunStatus, TestRun
from bugbout.testing.suites.base import PluginSuite

TIMEOUT = 600.0

PYTHON_PROJECT = {
    "src/tiny/__init__.py": "",
    "src/tiny/core.py": ("def double(x):\n    return 2 * x\n\n\ndef half(x):\n    return x // 2\n"),
    "tests/test_core.py": (
        "from tiny.core import double, half\n\n\n"
        "def test_double():\n    assert double(2) == 4\n\n\n"
        "def test_half():\n    assert half(5) == 3\n"
    ),
    "tests/test_exit.py": (
        "import os\n\n\ndef test_first():\n    pass\n\n\n"
        "def test_ends_the_run():\n    os._exit(0)\n\n\ndef test_last():\n    pass\n"
    ),
}
"""The default project: a package with one function whose test passes and one whose
test fails, and a test module whose second test ends the runner's process as if it had
finished."""


class TestRunnerSuite(PluginSuite):
    """Contract tests for a test runner (``bugbout_test_runners``).

    The suite writes :attr:`files` (a tiny project in the runner's language) to a tree,
    builds the environment :attr:`environment_plugin` makes for it and runs the runner
    there, confined as bugbout confines test runs (no network). A runner must: tell its
    test files from others; find the tests a file defines by parsing it; run chosen
    files and report every test's outcome by an id that starts with the file's path and
    ``::``, the same in two trees; leave out the tests ``skip`` names; never report as
    ``ok`` a run whose process the code under test ended early (:attr:`ends_early`); and
    either map which functions each test runs or say it cannot tell.

    The class attributes describe the project; the defaults are a Python one for
    ``pytest``. A runner for another language sets all of them::

        class TestVitest(TestRunnerSuite):
            plugin = "vitest"
            environment_plugin = "npm"
            files = {"package.json": ..., "src/core.ts": ..., "test/core.test.ts": ...}
            source = "src"
            tests = "test"
            passing = "test/core.test.ts::core > doubles"
            failing = "test/core.test.ts::core > halves"
            ends_early = "test/exit.test.ts"
            source_files = ("src/core.ts", "package.json")
            changed = ("src/core.ts", "...before...", "...after...", frozenset({5}))
    """

    __test__ = False  # a base, named like a test class: only a runner's subclass runs

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A runner's subclass (``class TestVitest(TestRunnerSuite)``) is collected."""
        super().__init_subclass__(**kwargs)
        cls.__test__ = "__test__" not in vars(cls) or bool(vars(cls)["__test__"])

    kind: ClassVar[str] = "test-runner"
    environment_plugin: ClassVar[str] = "interpreter"
    """The environment plugin that builds what the project's tests run in."""
    environment_options: ClassVar[dict[str, Any]] = {"path": sys.executable}
    """Its options: by default, the Python running the suite (which has pytest)."""
    files: ClassVar[dict[str, str]] = PYTHON_PROJECT
    """The project: path → text."""
    source: ClassVar[str] = "src/tiny"
    """The package's folder in :attr:`files` (``project.source``)."""
    tests: ClassVar[str] = "tests"
    """The tests' folder in :attr:`files` (``project.tests``)."""
    passing: ClassVar[str] = "tests/test_core.py::test_double"
    """The id of a test of :attr:`files` that passes; it calls a function of the package."""
    failing: ClassVar[str] = "tests/test_core.py::test_half"
    """The id of a test of the same file that fails."""
    ends_early: ClassVar[str] = "tests/test_exit.py"
    """A test file one of whose tests ends the runner's process with success."""
    source_files: ClassVar[tuple[str, ...]] = ("src/tiny/core.py", "setup.py", "README.md")
    """Paths that are not test files."""
    changed: ClassVar[tuple[str, str, str, frozenset[int] | None]] = (
        "src/tiny/core.py",
        "def double(x):\n    return 2 * x\n\n\ndef half(x):\n    return x // 2\n",
        "def double(x):\n    return 2 * x\n\n\ndef half(x):\n    return -(-x // 2)\n",
        frozenset({5}),
    )
    """A change to a source file: its path, text before and after, and the first lines
    of the functions it lies in (``None``: the runner cannot tell)."""
    meddling: ClassVar[str] = (
        "import os\n\n\ndef double(x):\n    os._exit(0)\n\n\ndef half(x):\n    return x // 2\n"
    )
    """The text :attr:`changed`'s file would have if a patch reached into the test run
    (here: ending the process) rather than fixing anything."""

    # -- fixtures ---------------------------------------------------------------------------

    @pytest.fixture
    def project(self) -> ProjectSettings:
        return ProjectSettings(source=self.source, tests=self.tests)

    @pytest.fixture
    def tree(self, tmp_path: Path) -> Path:
        """:attr:`files` written to a fresh folder."""
        return _written(tmp_path / "tree", self.files)

    @pytest.fixture
    def environment(
        self, plugins: Plugins, project: ProjectSettings, tree: Path, tmp_path: Path
    ) -> Environment:
        """The environment the project's tests run in."""
        builder = plugins.create(
            "environment", self.environment_plugin, dict(self.environment_options)
        )
        home = tmp_path / "home"
        home.mkdir()
        built: Environment = builder.build(
            EnvironmentRequest(project=project, tree=tree, home=home)
        )
        return built

    def run(self, runner: Any, request: TestRunRequest) -> TestRun:
        run: TestRun = runner.run(request)
        return run

    def request(
        self,
        environment: Environment,
        project: ProjectSettings,
        tree: Path,
        targets: tuple[str, ...],
        **fields: Any,
    ) -> TestRunRequest:
        return TestRunRequest(
            environment=environment,
            tree=tree,
            targets=targets,
            project=project,
            label="conformance",
            timeout=TIMEOUT,
            **fields,
        )

    # -- what every test runner must do -----------------------------------------------------

    def test_it_says_how_agents_write_tests(self, plugin_under_test: Any) -> None:
        style = plugin_under_test.style
        assert style.language and style.new_files and style.options
        assert plugin_under_test.is_test_file(f"{self.tests}/{style.example}")

    def test_it_tells_test_files_from_others(self, plugin_under_test: Any) -> None:
        for test in (self.passing, self.ends_early):
            assert plugin_under_test.is_test_file(file_of(test)), file_of(test)
        for path in self.source_files:
            assert not plugin_under_test.is_test_file(path), path

    def test_it_finds_a_file_s_tests_by_parsing_it(self, plugin_under_test: Any) -> None:
        path = file_of(self.passing)
        found = plugin_under_test.defined_tests(path, self.files[path].encode())
        for test in (self.passing, self.failing):
            assert test.split(SEPARATOR, 1)[1] in found, found
        assert plugin_under_test.defined_tests(path, None) == {}
        assert plugin_under_test.defined_tests(path, b"\xff(((") == {}

    def test_agents_tests_are_installed_where_it_collects_them(
        self, plugin_under_test: Any
    ) -> None:
        original = file_of(self.passing)
        first = plugin_under_test.install_as(original, "some_agent", 1)
        second = plugin_under_test.install_as(original, "some_agent", 2)
        assert first != second != original
        for path in (first, second):
            assert plugin_under_test.is_test_file(path), path
            assert PurePosixPath(path).parent == PurePosixPath(original).parent
            assert "some_agent" in path

    def test_the_suite_is_only_paths_the_tree_has(self, plugin_under_test: Any, tree: Path) -> None:
        found = plugin_under_test.suite_paths(tree, self.tests, [file_of(self.passing)])
        assert found == (self.tests,)
        assert plugin_under_test.suite_paths(tree, "no-such-folder", []) == ()
        assert plugin_under_test.writing_folder(found, self.tests) == self.tests

    def test_outcomes_by_id_the_same_in_two_trees(
        self,
        plugin_under_test: Any,
        environment: Environment,
        project: ProjectSettings,
        tree: Path,
        tmp_path: Path,
    ) -> None:
        target = (file_of(self.passing),)
        run = self.run(plugin_under_test, self.request(environment, project, tree, target))
        assert run.status == RunStatus.OK, run.detail
        assert run.outcomes[self.passing] == Outcome.PASSED
        assert run.outcomes[self.failing] == Outcome.FAILED
        assert all(test.startswith(target[0] + SEPARATOR) for test in run.outcomes)
        assert not any(str(tree) in test for test in run.outcomes)
        other = _written(tmp_path / "elsewhere", self.files)
        again = self.run(plugin_under_test, self.request(environment, project, other, target))
        assert again.outcomes == run.outcomes

    def test_skipped_ids_are_left_out(
        self,
        plugin_under_test: Any,
        environment: Environment,
        project: ProjectSettings,
        tree: Path,
    ) -> None:
        request = self.request(
            environment,
            project,
            tree,
            (file_of(self.passing),),
            skip=frozenset({self.failing}),
        )
        run = self.run(plugin_under_test, request)
        assert run.status == RunStatus.OK, run.detail
        assert set(run.outcomes) == {self.passing}

    def test_a_run_the_code_under_test_ended_is_never_ok(
        self,
        plugin_under_test: Any,
        environment: Environment,
        project: ProjectSettings,
        tree: Path,
    ) -> None:
        request = self.request(environment, project, tree, (self.ends_early,))
        run = self.run(plugin_under_test, request)
        assert run.status != RunStatus.OK, run.outcomes

    def test_its_coverage_map_names_the_functions_a_test_ran(
        self,
        plugin_under_test: Any,
        environment: Environment,
        project: ProjectSettings,
        tree: Path,
    ) -> None:
        request = self.request(environment, project, tree, (file_of(self.passing),))
        run, chunks = plugin_under_test.run_with_coverage(request)
        assert run.outcomes[self.passing] == Outcome.PASSED
        if chunks is None:  # it cannot tell: every patch runs the whole suite
            return
        coverage = read_coverage(chunks)
        assert self.changed[0] in coverage.files_of(self.passing)

    def test_a_patch_reaching_into_the_test_run_is_suspicious(
        self, plugin_under_test: Any, tree: Path, tmp_path: Path
    ) -> None:
        path = self.changed[0]
        change = FileChange(path=path, kind=ChangeKind.MODIFIED, area=ChangeArea.SOURCE)
        assert plugin_under_test.suspicious(tree, tree, [change]) == []
        patched = _written(tmp_path / "patched", {**self.files, path: self.meddling})
        found = plugin_under_test.suspicious(patched, tree, [change])
        assert found and all(line.startswith(f"{path}:") for line in found), found

    def test_it_says_which_functions_a_change_lies_in(self, plugin_under_test: Any) -> None:
        path, before, after, functions = self.changed
        assert plugin_under_test.changed_functions(path, before, after) == functions
        assert plugin_under_test.changed_functions(path, before, before) in (frozenset(), None)


def _written(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root
