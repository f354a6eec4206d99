"""The ``vitest`` test runner: a project's tests run with its own Vitest.

Vitest runs the tests in worker processes (or threads) and reports to bugbout's reporter
in its main process, which signs each outcome (:mod:`.reports`). A test that calls
``process.exit`` fails with Vitest's "process.exit unexpectedly called": the run is then
``tampered``. Skipped ids are left out by a test-name pattern that excludes them, and
dropped from the outcomes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath

from bugbout.plugins.test_runners.javascript.base import JavaScriptRunner
from bugbout.plugins.test_runners.javascript.layout import split_name
from bugbout.plugins.test_runners.javascript.reports import TITLES, RunReport
from bugbout.test_runners import NoOptions, TestRunnerPlugin, TestStyle, file_of, hookimpl

NAME = "vitest"
ENTRY = "node_modules/vitest/vitest.mjs"
STARTER = "vitest_entry.mjs"
"""Beside the reporter: starts the project's Vitest in the process that loads it."""
EXITED = "process.exit unexpectedly called"
CANARY = """import { test } from "vitest";

test("bugbout canary passes", () => {});
test("bugbout canary fails", () => {
  throw new Error("bugbout canary");
});
"""


class Vitest(JavaScriptRunner):
    """Vitest, from 0.34 on."""

    name = NAME
    reporter = "vitest_reporter.mjs"
    fatal = ("Error: Unknown reporter: ",)
    """Vitest 0.6 takes no reporter by its path, and then waits forever."""
    style = TestStyle(
        language="JavaScript or TypeScript",
        new_files="*.test.ts or *.test.js, as the project's tests are",
        example="something.test.ts",
        options="vitest options",
        first_failure="--bail=1",
    )

    def arguments(
        self, reporter: Path | None, targets: Sequence[str], skip: frozenset[str]
    ) -> list[str]:
        entry = ENTRY if reporter is None else str(reporter.with_name(STARTER))
        args = [entry, "run", "--passWithNoTests"]
        if reporter is not None:
            args.append(f"--reporter={reporter}")
        excluded = sorted({test.split("::", 1)[1].replace(TITLES, " ") for test in skip})
        if excluded:
            names = "|".join(re.escape(name) for name in excluded)
            args += ["--testNamePattern", f"^(?!(?:{names})$)"]
        return [*args, *targets]

    def canary(self, beside: str) -> tuple[str, str]:
        name = PurePosixPath(file_of(beside)).name
        suffix = split_name(name)[1] if ".test." in name or ".spec." in name else ".test.js"
        return suffix, CANARY

    def rooted(self, root: Path) -> list[str]:
        """``--root``: Vitest before 1.0 matched its exclusions (``**/.cache/**``) against
        absolute paths, so a tree under ``~/.cache/bugbout`` had no test files; through a
        link outside it, it has them."""
        return ["--root", str(root)]

    def meddling(self, report: RunReport) -> list[str]:
        return [
            f"{test} ended its test process ({EXITED})"
            for test, text in report.failures.items()
            if EXITED in text
        ] + [f"an error outside the tests: {text}" for text in report.unhandled if EXITED in text]


def vitest_runner(options: NoOptions) -> Vitest:
    """The Vitest runner (the project's own Vitest, from its ``node_modules``)."""
    return Vitest()


@hookimpl
def bugbout_test_runners() -> Iterator[TestRunnerPlugin]:
    yield TestRunnerPlugin(
        name=NAME, factory=vitest_runner, description="Vitest, a JavaScript project's own"
    )
