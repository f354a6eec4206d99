"""The ``specify`` assignment: the rule behind the issue and the behaviour around it."""

from __future__ import annotations

from bugbout import ExaminerPlugin, hookimpl
from bugbout.core.examining import examiner_prompt
from bugbout.core.records import Task
from bugbout.core.types import NoOptions

SCOPE = (
    "Write tests for what the issue reports (those must fail on the code as it is now), "
    "for the general rule behind it, and for nearby behaviour that a fix must keep "
    "(those may already pass)."
)


class Specify:
    """A specification: reproductions plus tests of behaviour a fix must keep."""

    name = "specify"

    def __init__(self, options: NoOptions | None = None) -> None:
        self.options = options

    def prompt(self, task: Task, *, tests: str, test_command: str) -> str:
        return examiner_prompt(task, tests=tests, test_command=test_command, scope=SCOPE)

    def must_fail_on_base(self) -> bool:
        return False


@hookimpl
def bugbout_examiners():  # type: ignore[no-untyped-def]
    yield ExaminerPlugin(
        name="specify",
        factory=Specify,
        description="the issue, the rule behind it, and nearby behaviour a fix must keep",
    )
