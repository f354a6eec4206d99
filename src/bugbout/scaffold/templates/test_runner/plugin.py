"""The ``__NAME__`` test runner: pytest, with variables set for every test run.

A test runner runs a project's tests in the tree, environment and confinement bugbout
gives it, and reports each test's outcome by id. This one delegates to bugbout's
``pytest`` runner and adds ``variables`` to every run's environment.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from bugbout.test_runners import (
    Environment,
    FileChange,
    Options,
    ProjectSettings,
    TestRun,
    TestRunnerPlugin,
    TestRunRequest,
    TestStyle,
    create_plugin,
    hookimpl,
)
from pydantic import Field


class __TITLE__Options(Options):
    """Options of the ``__NAME__`` test runner."""

    variables: dict[str, str] = Field(default_factory=dict)
    """Environment variables for every test run, e.g. ``{TZ: UTC}``."""


class __TITLE__Runner:
    """pytest's runner, each run's project given the variables."""

    def __init__(self, options: __TITLE__Options | None = None) -> None:
        self.options = options or __TITLE__Options()
        self.inner = create_plugin(TestRunnerPlugin, "pytest")
        self.style: TestStyle = self.inner.style

    def is_test_file(self, path: str) -> bool:
        return self.inner.is_test_file(path)

    def defined_tests(self, path: str, source: bytes | None) -> dict[str, int | None]:
        return self.inner.defined_tests(path, source)

    def suite_paths(self, tree: Path, tests: str, test_files: Iterable[str]) -> tuple[str, ...]:
        return self.inner.suite_paths(tree, tests, test_files)

    def writing_folder(self, suite: Sequence[str], tests: str) -> str:
        return self.inner.writing_folder(suite, tests)

    def install_as(self, original: str, author: str, number: int) -> str:
        return self.inner.install_as(original, author, number)

    def script_args(self, environment: Environment, project: ProjectSettings) -> list[str]:
        return self.inner.script_args(environment, self._project(project))

    def run(self, request: TestRunRequest) -> TestRun:
        return self.inner.run(self._request(request))

    def run_with_coverage(self, request: TestRunRequest) -> tuple[TestRun, list[bytes] | None]:
        return self.inner.run_with_coverage(self._request(request))

    def suspicious(self, tree: Path, base: Path | None, changes: Sequence[FileChange]) -> list[str]:
        return self.inner.suspicious(tree, base, changes)

    def changed_functions(self, path: str, before: str, after: str) -> frozenset[int] | None:
        return self.inner.changed_functions(path, before, after)

    def _project(self, project: ProjectSettings) -> ProjectSettings:
        return project.model_copy(update={"env": {**project.env, **self.options.variables}})

    def _request(self, request: TestRunRequest) -> TestRunRequest:
        return dataclasses.replace(request, project=self._project(request.project))


@hookimpl
def bugbout_test_runners() -> Iterator[TestRunnerPlugin]:
    yield TestRunnerPlugin(
        name="__NAME__",
        factory=__TITLE__Runner,
        options=__TITLE__Options,
        description="pytest, with variables for every test run",
    )
