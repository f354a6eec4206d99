"""What every JavaScript runner plugin shares: its test files and titles (by parsing),
its layout, its tripwires, and its runs through :mod:`.runs`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from bugbout.plugins.test_runners.javascript import layout, runs, tripwires
from bugbout.plugins.test_runners.javascript.reports import RunReport
from bugbout.test_runners import (
    Environment,
    FileChange,
    ProjectSettings,
    TestRun,
    TestRunRequest,
    TestStyle,
)


class JavaScriptRunner:
    """A JavaScript runner, as :class:`bugbout.test_runners.TestRunner` asks; a plugin
    says how it is started (:class:`.runs.Runner`)."""

    name = ""
    reporter = ""
    fatal: tuple[str, ...] = ()
    style = TestStyle(
        language="JavaScript or TypeScript",
        new_files="*.test.js (or .ts, as the project's tests are)",
        example="something.test.js",
        options="options",
        first_failure="--bail",
    )

    def is_test_file(self, path: str) -> bool:
        from bugbout.plugins.test_runners.javascript import files

        return files.is_test_file(path)

    def defined_tests(self, path: str, source: bytes | None) -> dict[str, int | None]:
        from bugbout.plugins.test_runners.javascript import titles

        return titles.defined_tests(path, source)

    def suite_paths(self, tree: Path, tests: str, test_files: Iterable[str]) -> tuple[str, ...]:
        return layout.suite_paths(tree, tests, test_files)

    def writing_folder(self, suite: Sequence[str], tests: str) -> str:
        return layout.writing_folder(suite, tests)

    def install_as(self, original: str, author: str, number: int) -> str:
        return layout.install_as(original, author, number)

    def script_args(self, environment: Environment, project: ProjectSettings) -> list[str]:
        return self.arguments(None, [], frozenset())

    def run(self, request: TestRunRequest) -> TestRun:
        return runs.run_javascript(self, request)

    def run_with_coverage(self, request: TestRunRequest) -> tuple[TestRun, list[bytes] | None]:
        """The run, and no coverage map: every patch runs the whole suite."""
        return self.run(request), None

    def suspicious(self, tree: Path, base: Path | None, changes: Sequence[FileChange]) -> list[str]:
        return tripwires.suspicious(tree, base, changes)

    def changed_functions(self, path: str, before: str, after: str) -> frozenset[int] | None:
        """``None``: without a coverage map, no change is narrowed to functions."""
        return None

    def arguments(
        self, reporter: Path | None, targets: Sequence[str], skip: frozenset[str]
    ) -> list[str]:
        raise NotImplementedError

    def canary(self, beside: str) -> tuple[str, str]:
        raise NotImplementedError

    def meddling(self, report: RunReport) -> list[str]:
        return []

    def rooted(self, root: Path) -> list[str]:
        return []
