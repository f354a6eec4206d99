"""The ``pytest`` test runner (the default): runs a Python project's tests with pytest.

Outcomes come from bugbout's own pytest plugin, writing authenticated JSON lines to an
inherited file descriptor beside canary tests that must pass and fail, and are checked
against pytest's own tally; a test that kills pytest is failed and the others run again
without it. The options a run gives pytest suit the environment's pytest, back to 2.7
(its era). Test ids are pytest's node ids; the coverage map comes from a tracer loaded
as a pytest plugin.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path, PurePosixPath

from bugbout.miners import defined_tests_memo
from bugbout.test_runners import (
    Environment,
    FileChange,
    NoOptions,
    ProjectSettings,
    TestRun,
    TestRunnerPlugin,
    TestRunRequest,
    TestStyle,
    changed_functions,
    hookimpl,
    inspect_patch,
    is_test_module,
    pytest_era,
    run_pytest,
    suite_paths,
    writing_folder,
)

NAME = "pytest"
_UNSAFE = re.compile(r"[^A-Za-z0-9]+")
NOT_PLAIN = frozenset({"conftest.py", "sitecustomize.py", "usercustomize.py"})
"""Module names that pytest or the interpreter runs of its own accord (hooks, start-up
code): a change to one may reach any test. A package's ``__init__.py`` is plain: its
functions run when called, as any module's, and the tracer sees them."""


class Pytest:
    """pytest, as :class:`bugbout.test_runners.TestRunner` asks."""

    name = NAME
    style = TestStyle(
        language="Python",
        new_files="test_*.py",
        example="test_something.py",
        options="pytest options",
        first_failure="-x",
    )

    def __init__(self) -> None:
        self._statements: dict[str, dict[str, int | None]] = {}
        """The tests of each top-level statement parsed: successive versions of a module
        (a history walk, an agent's edits) share most of theirs."""

    def is_test_file(self, path: str) -> bool:
        return is_test_module(path)

    def defined_tests(self, path: str, source: bytes | None) -> dict[str, int | None]:
        return defined_tests_memo(source, self._statements) if source is not None else {}

    def suite_paths(self, tree: Path, tests: str, test_files: Iterable[str]) -> tuple[str, ...]:
        return suite_paths(tree, tests, test_files)

    def writing_folder(self, suite: Sequence[str], tests: str) -> str:
        return writing_folder(suite, tests)

    def install_as(self, original: str, author: str, number: int) -> str:
        location = PurePosixPath(original)
        name = _UNSAFE.sub("_", location.stem.removeprefix("test_")).strip("_") or "tests"
        again = f"_{number}" if number > 1 else ""
        return str(location.with_name(f"test_bb_{author}__{name}{again}.py"))

    def script_args(self, environment: Environment, project: ProjectSettings) -> list[str]:
        era = pytest_era(environment)
        return ["-p", "no:cacheprovider", *era.neutral(), *project.pytest_args]

    def run(self, request: TestRunRequest) -> TestRun:
        return self._run(request, None)

    def run_with_coverage(self, request: TestRunRequest) -> tuple[TestRun, list[bytes] | None]:
        chunks: list[bytes] = []
        return self._run(request, chunks), chunks

    def suspicious(self, tree: Path, base: Path | None, changes: Sequence[FileChange]) -> list[str]:
        return inspect_patch(tree, base, changes)

    def changed_functions(self, path: str, before: str, after: str) -> frozenset[int] | None:
        name = PurePosixPath(path).name
        if not name.endswith(".py") or name in NOT_PLAIN:
            return None
        return changed_functions(before, after)

    def _run(self, request: TestRunRequest, coverage: list[bytes] | None) -> TestRun:
        return run_pytest(
            request.environment,
            request.tree,
            list(request.targets),
            project=request.project,
            label=request.label,
            timeout=request.timeout,
            confine=request.confine,
            skip=request.skip,
            coverage=coverage,
            hostile=request.hostile,
        )


def pytest_runner(options: NoOptions) -> Pytest:
    """The pytest runner (it takes no options: ``project.pytest-args`` are the project's)."""
    return Pytest()


@hookimpl
def bugbout_test_runners() -> Iterator[TestRunnerPlugin]:
    yield TestRunnerPlugin(
        name=NAME, factory=pytest_runner, description="pytest, from 2.7 on (the default)"
    )
