"""The ``mocha`` test runner: a project's tests run with its own Mocha.

bugbout runs the test files in Mocha's parallel worker processes (``--parallel``, from
Mocha 8 on) and reads the outcomes from bugbout's reporter in the main process, which
signs each one (:mod:`.reports`). A worker that ends while its file runs is an error
outside the tests: the run is ``crashed``. An older Mocha runs the tests in its own
process, beside the reporter: its runs have the canaries and the tally, but the code
under test shares the reporter's process. Skipped ids are left out by an inverted grep
of their full titles, and dropped from the outcomes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from bugbout.plugins.test_runners.javascript import runs
from bugbout.plugins.test_runners.javascript.base import JavaScriptRunner
from bugbout.plugins.test_runners.javascript.reports import TITLES
from bugbout.test_runners import (
    Environment,
    NoOptions,
    ProjectSettings,
    TestRun,
    TestRunnerPlugin,
    TestRunRequest,
    TestStyle,
    hookimpl,
)

NAME = "mocha"
PARALLEL = 8
"""The first Mocha that runs test files in worker processes."""
ENTRY = "node_modules/mocha/bin/_mocha"
"""The runner itself, in every Mocha from 1 to 11 (``bin/mocha``, or ``bin/mocha.js``
from 10, may start it in a child process, which would not inherit bugbout's
descriptors)."""
CANARY = """it("bugbout canary passes", () => {});
it("bugbout canary fails", () => {
  throw new Error("bugbout canary");
});
"""


class Mocha(JavaScriptRunner):
    """Mocha (in parallel from 8 on)."""

    name = NAME
    parallel = True
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
        args = [ENTRY]
        if reporter is not None:
            args += ["--reporter", str(reporter)]
            args += ["--parallel", "--jobs", "2"] if self.parallel else []
        excluded = sorted({test.split("::", 1)[1].replace(TITLES, " ") for test in skip})
        if excluded:
            names = "|".join(re.escape(name) for name in excluded)
            args += ["--grep", f"^(?:{names})$", "--invert"]
        return [*args, "--", *targets] if targets else args

    def canary(self, beside: str) -> tuple[str, str]:
        return ".test.cjs", CANARY

    def run(self, request: TestRunRequest) -> TestRun:
        """The run, in parallel when the environment's Mocha is 8 or later."""
        return runs.run_javascript(_of(request.environment), request)

    def script_args(self, environment: Environment, project: ProjectSettings) -> list[str]:
        return _of(environment).arguments(None, [], frozenset())


def _of(environment: Environment) -> Mocha:
    """The runner for the environment's Mocha."""
    runner = Mocha()
    runner.parallel = _major(environment) >= PARALLEL
    return runner


def _major(environment: Environment) -> int:
    """The major version of the environment's Mocha (``PARALLEL`` when it cannot tell)."""
    modules = getattr(environment, "modules", None)
    if not isinstance(modules, Path):
        return PARALLEL
    try:
        declared = json.loads(Path(modules, "mocha", "package.json").read_text())
        return int(str(declared["version"]).split(".")[0])
    except (OSError, ValueError, KeyError):
        return PARALLEL


def mocha_runner(options: NoOptions) -> Mocha:
    """The Mocha runner (the project's own Mocha, from its ``node_modules``)."""
    return Mocha()


@hookimpl
def bugbout_test_runners() -> Iterator[TestRunnerPlugin]:
    yield TestRunnerPlugin(name=NAME, factory=mocha_runner, description="Mocha, a project's own")
