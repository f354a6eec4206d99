"""The ``mocha`` test runner: a project's tests run with its own Mocha.

bugbout runs the test files in Mocha's parallel worker processes (``--parallel``, from
Mocha 8 on) and reads the outcomes from bugbout's reporter in the main process, which
signs each one (:mod:`.reports`). A worker that ends while its file runs is an error
outside the tests: the run is ``crashed``. Skipped ids are left out by an inverted grep
of their full titles, and dropped from the outcomes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from bugbout.plugins.test_runners.javascript.base import JavaScriptRunner
from bugbout.plugins.test_runners.javascript.reports import TITLES
from bugbout.test_runners import NoOptions, TestRunnerPlugin, TestStyle, hookimpl

NAME = "mocha"
ENTRY = "node_modules/mocha/bin/mocha.js"
CANARY = """it("bugbout canary passes", () => {});
it("bugbout canary fails", () => {
  throw new Error("bugbout canary");
});
"""


class Mocha(JavaScriptRunner):
    """Mocha, from 8 on."""

    name = NAME
    reporter = "mocha_reporter.cjs"
    style = TestStyle(
        language="JavaScript",
        new_files="*.test.js (or the project's own naming), using describe/it",
        example="something.test.js",
        options="mocha options",
        first_failure="--bail",
    )

    def arguments(
        self, reporter: Path | None, targets: Sequence[str], skip: frozenset[str]
    ) -> list[str]:
        args = [ENTRY, "--no-color"]
        if reporter is not None:
            args += ["--reporter", str(reporter), "--parallel", "--jobs", "2"]
        excluded = sorted({test.split("::", 1)[1].replace(TITLES, " ") for test in skip})
        if excluded:
            names = "|".join(re.escape(name) for name in excluded)
            args += ["--grep", f"^(?:{names})$", "--invert"]
        return [*args, "--", *targets] if targets else args

    def canary(self, beside: str) -> tuple[str, str]:
        return ".test.cjs", CANARY


def mocha_runner(options: NoOptions) -> Mocha:
    """The Mocha runner (the project's own Mocha, from its ``node_modules``)."""
    return Mocha()


@hookimpl
def bugbout_test_runners() -> Iterator[TestRunnerPlugin]:
    yield TestRunnerPlugin(name=NAME, factory=mocha_runner, description="Mocha, a project's own")
