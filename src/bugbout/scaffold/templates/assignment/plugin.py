"""The ``__NAME__`` assignment: reproductions, edge cases included.

An examiner is an agent that writes tests from the issue alone and fixes nothing; its
assignment is the prompt it receives and what its tests must do on the unfixed code.
Tests that must fail there are reproductions: they cross-examine every contestant's
patch. This one asks for the reported case and its neighbouring edge cases, through
bugbout's shared examiner prompt (:func:`bugbout.assignments.examiner_prompt`).
"""

from __future__ import annotations

from collections.abc import Iterator

from bugbout.assignments import (
    AssignmentPlugin,
    Options,
    Task,
    TestStyle,
    examiner_prompt,
    hookimpl,
)

SCOPE = (
    "Write tests for the behaviour the issue reports and for its edge cases (empty, "
    "smallest and largest inputs, boundaries): each must fail on the code as it is now "
    "and pass once the issue is fixed."
)


class __TITLE__Options(Options):
    """Options of the ``__NAME__`` assignment."""

    scope: str = SCOPE
    """What the examiner is asked to test."""


class __TITLE__Assignment:
    """Reproductions of the issue and its edge cases: each must fail on the unfixed code."""

    name = "__NAME__"

    def __init__(self, options: __TITLE__Options | None = None) -> None:
        self.options = options or __TITLE__Options()

    def prompt(self, task: Task, *, tests: str, test_command: str, style: TestStyle) -> str:
        return examiner_prompt(
            task, tests=tests, test_command=test_command, style=style, scope=self.options.scope
        )

    def must_fail_on_base(self) -> bool:
        return True


@hookimpl
def bugbout_assignments() -> Iterator[AssignmentPlugin]:
    yield AssignmentPlugin(
        name=__TITLE__Assignment.name,
        factory=__TITLE__Assignment,
        options=__TITLE__Options,
        description="reproductions of the issue and its edge cases",
    )
