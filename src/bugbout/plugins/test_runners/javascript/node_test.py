"""The ``node-test`` test runner: a project's tests run with ``node --test``.

Each test file runs in a child process of its own and reports to bugbout's reporter in
the runner's main process, which signs each outcome (:mod:`.reports`). A file whose
process ends before it reports its tests is reported by the main process as the file
itself: passing (it ended as if it had finished) makes the run ``tampered``, failing a
collection error. Targets that are folders are run as the test files they hold; skipped
ids are dropped from the outcomes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from bugbout.plugins.test_runners.javascript.base import JavaScriptRunner
from bugbout.test_runners import NoOptions, TestRunnerPlugin, TestStyle, hookimpl

NAME = "node-test"
CANARY = """import { test } from "node:test";

test("bugbout canary passes", () => {});
test("bugbout canary fails", () => {
  throw new Error("bugbout canary");
});
"""


class NodeTest(JavaScriptRunner):
    """``node --test``, from Node 20 on."""

    name = NAME
    reporter = "node_test_reporter.mjs"
    style = TestStyle(
        language="JavaScript",
        new_files="*.test.js or *.test.mjs, using node:test",
        example="something.test.js",
        options="node --test options",
        first_failure="",
    )

    def arguments(
        self, reporter: Path | None, targets: Sequence[str], skip: frozenset[str]
    ) -> list[str]:
        chosen = ["--test-reporter", str(reporter), "--test-reporter-destination", "stdout"]
        return ["--test", *(chosen if reporter is not None else []), *targets]

    def canary(self, beside: str) -> tuple[str, str]:
        return ".test.mjs", CANARY


def node_test_runner(options: NoOptions) -> NodeTest:
    """The ``node --test`` runner (this machine's Node)."""
    return NodeTest()


@hookimpl
def bugbout_test_runners() -> Iterator[TestRunnerPlugin]:
    yield TestRunnerPlugin(
        name=NAME, factory=node_test_runner, description="node --test, Node's own runner"
    )
