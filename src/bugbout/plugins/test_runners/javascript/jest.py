"""The ``jest`` test runner: a project's tests run with its own Jest.

bugbout runs the tests in Jest's worker processes (``--maxWorkers=2``, without Jest's
cache, whose timings would let it run a fast suite in its main process) and reads the
outcomes from bugbout's reporter in the main process, which signs each one
(:mod:`.reports`). A worker that ends while its file runs makes Jest report the file as
crashed: when it ended with success (``process.exit(0)``), the run is ``tampered``.
Skipped ids are left out by a test-name pattern that excludes them, and dropped from the
outcomes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath

from bugbout.plugins.test_runners.javascript.base import JavaScriptRunner
from bugbout.plugins.test_runners.javascript.layout import split_name
from bugbout.plugins.test_runners.javascript.reports import TITLES, RunReport
from bugbout.test_runners import NoOptions, TestRunnerPlugin, TestStyle, file_of, hookimpl

NAME = "jest"
ENTRY = "node_modules/jest/bin/jest.js"
ENDED = "exitCode=0"
CANARY = """test("bugbout canary passes", () => {});
test("bugbout canary fails", () => {
  throw new Error("bugbout canary");
});
"""


class Jest(JavaScriptRunner):
    """Jest, from 27 on."""

    name = NAME
    reporter = "jest_reporter.cjs"
    style = TestStyle(
        language="JavaScript or TypeScript",
        new_files="*.test.js or *.test.ts, as the project's tests are",
        example="something.test.js",
        options="jest options",
        first_failure="--bail",
    )

    def arguments(
        self, reporter: Path | None, targets: Sequence[str], skip: frozenset[str]
    ) -> list[str]:
        args = [ENTRY, "--ci", "--coverage=false", "--watchman=false", "--passWithNoTests"]
        if reporter is not None:
            args += [f"--reporters={reporter}", "--maxWorkers=2", "--no-cache"]
        excluded = sorted({test.split("::", 1)[1].replace(TITLES, " ") for test in skip})
        if excluded:
            names = "|".join(re.escape(name) for name in excluded)
            args += ["--testNamePattern", f"^(?!(?:{names})$)"]
        return [*args, "--", *targets] if targets else args

    def canary(self, beside: str) -> tuple[str, str]:
        name = PurePosixPath(file_of(beside)).name
        suffix = split_name(name)[1] if ".test." in name or ".spec." in name else ".test.js"
        return suffix, CANARY

    def meddling(self, report: RunReport) -> list[str]:
        return [
            f"{path} ended its test process as if it had finished"
            for path, error in report.file_errors.items()
            if error.endswith(ENDED)
        ]


def jest_runner(options: NoOptions) -> Jest:
    """The Jest runner (the project's own Jest, from its ``node_modules``)."""
    return Jest()


@hookimpl
def bugbout_test_runners() -> Iterator[TestRunnerPlugin]:
    yield TestRunnerPlugin(name=NAME, factory=jest_runner, description="Jest, a project's own")
