"""What a contestant is told: the issue, the request, and how to run the tests."""

from __future__ import annotations

from bugbout.core.store.records import Task

PROMPT_VERSION = "1"
"""Changing the prompt's wording changes this, so attempts keyed by it are re-run."""


def contestant_prompt(task: Task, *, tests: str, test_command: str) -> str:
    """The prompt for a contestant on ``task``."""
    return f"""\
You are working in a checkout of a Python project. A user reported this issue:

<issue>
{task.problem_statement.strip() or task.title}
</issue>

Fix the issue by changing the project's source code, and add a regression test under
`{tests}/` that fails without your fix and passes with it. Keep the change focused on
the issue.

Run the project's tests with:

    {test_command}

(append test paths or pytest options, e.g. `{test_command} {tests}/test_something.py -x`).
There is no network and no version-control history here. When you are done, stop and
summarise what you changed.
"""
