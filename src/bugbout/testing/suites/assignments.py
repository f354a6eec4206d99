"""The conformance suite of assignments, what an examiner is asked for."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from bugbout.core.plumbing.testruns.test_runner import TestStyle
from bugbout.core.store.records import Task, TaskIssue
from bugbout.testing.suites.base import PluginSuite

EXAMINER_TESTS_DIR = "checks/unit"
"""The tests directory the examiner is told about (not ``tests``, so that the prompt
must really name it)."""
EXAMINER_TEST_COMMAND = "/opt/conformance/bin/run-tests"
EXAMINER_STYLE = TestStyle(
    language="TypeScript",
    new_files="*.check.ts",
    example="ratio.check.ts",
    options="conformance-runner options",
    first_failure="--bail",
)
"""The test runner's style the examiner is told to follow (not pytest's, so that the
prompt must really follow it)."""
_NOT_FIXING = re.compile(
    r"\b(?:do\s+not|don't|must\s+not|never|not\s+to|without)\b[\w\s,'`*]{0,60}?\bfix",
    re.IGNORECASE,
)


def examiner_task() -> Task:
    """A task whose fix's tests and commit the examiner must never be told about."""
    return Task(
        id="conformance-task",
        sha="f1e2d3c4b5a6" * 3 + "f1e2",
        parent="0a1b2c3d4e5f" * 3 + "0a1b",
        date="2024-01-01T00:00:00+00:00",
        title="Fix crash in ratio() when the reference is zero (#12)",
        issue=TaskIssue(number=12, title="ratio() crashes when the reference area is zero"),
        problem_statement=(
            "ratio() crashes when the reference area is zero\n\n"
            "`ratio(5, 0)` raises ZeroDivisionError; it should return 0.0."
        ),
        source_files=["src/shapes/area.py"],
        test_files=["tests/test_hidden_ratio_fix.py"],
        added_tests=["tests/test_hidden_ratio_fix.py::test_hidden_zero_reference"],
    )


class AssignmentSuite(PluginSuite):
    """Contract tests for an assignment (``bugbout_assignments``).

    ``prompt(task, tests=..., test_command=..., style=...)`` tells the examiner the
    issue, where to write its tests, how to name them (the test runner's ``style``) and
    how to run them, and not to fix anything; it never reveals the
    fix (its commit or its tests). ``must_fail_on_base()`` is a bool.
    """

    kind: ClassVar[str] = "assignment"

    def prompt(self, plugin: Any) -> str:
        text = plugin.prompt(
            examiner_task(),
            tests=EXAMINER_TESTS_DIR,
            test_command=EXAMINER_TEST_COMMAND,
            style=EXAMINER_STYLE,
        )
        assert isinstance(text, str), f"prompt() returned {type(text).__name__}"
        return text

    def test_is_an_assignment(self, plugin_under_test: Any) -> None:
        for method in ("prompt", "must_fail_on_base"):
            assert callable(getattr(plugin_under_test, method, None)), f"no {method}()"
        assert plugin_under_test.name == self.plugin
        assert isinstance(plugin_under_test.must_fail_on_base(), bool)

    def test_prompt_names_the_tests_directory_and_command(self, plugin_under_test: Any) -> None:
        text = self.prompt(plugin_under_test)
        assert EXAMINER_TESTS_DIR in text
        assert EXAMINER_TEST_COMMAND in text

    def test_prompt_names_test_files_as_the_runner_does(self, plugin_under_test: Any) -> None:
        text = self.prompt(plugin_under_test)
        assert EXAMINER_STYLE.new_files in text
        assert "test_*.py" not in text and "pytest" not in text

    def test_prompt_tells_the_issue(self, plugin_under_test: Any) -> None:
        assert "ZeroDivisionError" in self.prompt(plugin_under_test)

    def test_prompt_says_not_to_fix(self, plugin_under_test: Any) -> None:
        text = self.prompt(plugin_under_test)
        assert _NOT_FIXING.search(text), "the prompt does not tell the examiner not to fix"

    def test_prompt_never_reveals_the_fix(self, plugin_under_test: Any) -> None:
        text = self.prompt(plugin_under_test)
        task = examiner_task()
        for secret in (task.sha, task.sha[:12], *task.test_files, *task.added_tests):
            assert secret not in text, f"the prompt reveals {secret!r}"
        assert "test_hidden" not in text

    def test_prompt_is_deterministic(self, plugin_under_test: Any) -> None:
        assert self.prompt(plugin_under_test) == self.prompt(plugin_under_test)
