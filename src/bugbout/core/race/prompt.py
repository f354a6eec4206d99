"""What a contestant is told: the issue, the request, and how to run the tests."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bugbout.core.store.records import Task

if TYPE_CHECKING:
    from bugbout.core.plumbing.testruns.test_runner import TestStyle

PROMPT_VERSION = "1"
"""Changing the prompt's wording changes this, so attempts keyed by it are re-run."""


def contestant_prompt(task: Task, *, tests: str, test_command: str, style: TestStyle) -> str:
    """The prompt for a contestant on ``task``, its tests written in the runner's ``style``."""
    example = f"{test_command} {tests}/{style.example} {style.first_failure}".rstrip()
    return f"""\
You are working in a checkout of a {style.language} project. A user reported this issue:

<issue>
{task.problem_statement.strip() or task.title}
</issue>

Fix the issue by changing the project's source code, and add a regression test under
`{tests}/` that fails without your fix and passes with it. Keep the change focused on
the issue.

Run the project's tests with:

    {test_command}

(append test paths or {style.options}, e.g. `{example}`).
There is no network and no version-control history here. When you are done, stop and
summarise what you changed.
"""
