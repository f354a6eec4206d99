"""The ``reproduce`` assignment: tests for exactly what the issue reports."""

from __future__ import annotations

from bugbout import ExaminerPlugin, hookimpl
from bugbout.core.examining import examiner_prompt
from bugbout.core.records import Task
from bugbout.core.types import NoOptions

SCOPE = (
    "Write tests for exactly the behaviour the issue reports: each must fail on the code "
    "as it is now, for the reason the issue describes, and pass once the issue is fixed."
)


class Reproduce:
    """Reproductions: every test must fail on the unfixed code."""

    name = "reproduce"

    def __init__(self, options: NoOptions | None = None) -> None:
        self.options = options

    def prompt(self, task: Task, *, tests: str, test_command: str) -> str:
        return examiner_prompt(task, tests=tests, test_command=test_command, scope=SCOPE)

    def must_fail_on_base(self) -> bool:
        return True


@hookimpl
def bugbout_examiners():  # type: ignore[no-untyped-def]
    yield ExaminerPlugin(
        name="reproduce", factory=Reproduce, description="tests for exactly what the issue reports"
    )
