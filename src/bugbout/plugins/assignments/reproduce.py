"""The ``reproduce`` assignment: tests for exactly what the issue reports; every test must
fail on the unfixed code."""

from __future__ import annotations

from collections.abc import Iterator

from bugbout.assignments import AssignmentPlugin, NoOptions, PromptAssignment, hookimpl

NAME = "reproduce"

SCOPE = (
    "Write tests for exactly the behaviour the issue reports: each must fail on the code "
    "as it is now, for the reason the issue describes, and pass once the issue is fixed."
)


def reproduce(options: NoOptions) -> PromptAssignment:
    """Reproductions: every test must fail on the unfixed code."""
    return PromptAssignment(NAME, SCOPE, reproductions_only=True)


@hookimpl
def bugbout_assignments() -> Iterator[AssignmentPlugin]:
    yield AssignmentPlugin(
        name=NAME, factory=reproduce, description="tests for exactly what the issue reports"
    )
