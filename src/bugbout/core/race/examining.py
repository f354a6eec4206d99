"""Examiners: agents that write tests from the issue alone and fix nothing.

What an examiner is asked for is an *assignment* plugin: the prompt the examiner agent
receives and what its tests must do on the unfixed code. Its tests later cross-examine
every patch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from bugbout.core.plumbing.testruns.test_runner import TestStyle
    from bugbout.core.store.records import Task


class Assignment(Protocol):
    """What an assignment plugin's factory returns."""

    name: str

    def prompt(self, task: Task, *, tests: str, test_command: str, style: TestStyle) -> str:
        """The examiner's prompt for ``task``: its tests go under ``tests``, named as
        the test runner's ``style`` says, and run with ``test_command``."""
        ...

    def must_fail_on_base(self) -> bool:
        """Whether every test it writes must fail on the unfixed code (a reproduction)."""
        ...


def examiner_prompt(
    task: Task, *, tests: str, test_command: str, style: TestStyle, scope: str
) -> str:
    """The prompt both built-in assignments share; ``scope`` says what to test."""
    return f"""\
You are working in a checkout of a {style.language} project. A user reported this issue:

<issue>
{task.problem_statement.strip() or task.title}
</issue>

Do NOT fix the issue and do not change the project's source code. Your job is to write
tests, under `{tests}/` in new test modules named `{style.new_files}`, that a correct fix must
pass. {scope}

Run the project's tests with:

    {test_command}

(append test paths or {style.options}). There is no network and no version-control
history here. When you are done, stop and summarise the tests you wrote.
"""


@dataclass(frozen=True)
class PromptAssignment:
    """The built-in assignments: :func:`examiner_prompt` with a ``scope``, and whether
    every test must fail on the unfixed code (``reproduce``) or may pass (``specify``)."""

    name: str
    scope: str
    reproductions_only: bool

    def prompt(self, task: Task, *, tests: str, test_command: str, style: TestStyle) -> str:
        return examiner_prompt(
            task, tests=tests, test_command=test_command, style=style, scope=self.scope
        )

    def must_fail_on_base(self) -> bool:
        return self.reproductions_only
