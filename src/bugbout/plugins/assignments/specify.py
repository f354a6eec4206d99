"""The ``specify`` assignment: the rule behind the issue and the behaviour around it;
its tests of that behaviour may already pass on the unfixed code."""

from __future__ import annotations

from collections.abc import Iterator

from bugbout.assignments import AssignmentPlugin, NoOptions, PromptAssignment, hookimpl

NAME = "specify"

SCOPE = (
    "Write tests for what the issue reports (those must fail on the code as it is now), "
    "for the general rule behind it, and for nearby behaviour that a fix must keep "
    "(those may already pass)."
)


def specify(options: NoOptions) -> PromptAssignment:
    """A specification: reproductions plus tests of behaviour a fix must keep."""
    return PromptAssignment(NAME, SCOPE, reproductions_only=False)


@hookimpl
def bugbout_assignments() -> Iterator[AssignmentPlugin]:
    yield AssignmentPlugin(
        name=NAME,
        factory=specify,
        description="the issue, the rule behind it, and nearby behaviour a fix must keep",
    )
