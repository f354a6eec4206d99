"""The stable API for assignment plugins: their record, ``hookimpl``, ``Options``, and the
examiner's prompt, the task it is written for and the test runner's style its tests
follow.

An assignment plugin imports these names from here; ``bugbout.core`` is private and may
change in any release. Each name is imported the first time it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bugbout.core.contract.exports import lazy_exports

__all__ = [
    "Assignment",
    "AssignmentPlugin",
    "NoOptions",
    "Options",
    "PromptAssignment",
    "Task",
    "TestStyle",
    "create_plugin",
    "examiner_prompt",
    "hookimpl",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Assignment": "bugbout.core.race.examining",
        "AssignmentPlugin": "bugbout.core.contract.types",
        "NoOptions": "bugbout.core.contract.types",
        "Options": "bugbout.core.contract.types",
        "PromptAssignment": "bugbout.core.race.examining",
        "Task": "bugbout.core.store.records",
        "TestStyle": "bugbout.core.plumbing.testruns.test_runner",
        "create_plugin": "bugbout.core.contract.manager",
        "examiner_prompt": "bugbout.core.race.examining",
        "hookimpl": "bugbout.core.contract.hookspecs",
    },
)

if TYPE_CHECKING:
    from bugbout.core.contract.hookspecs import hookimpl
    from bugbout.core.contract.manager import create_plugin
    from bugbout.core.contract.types import AssignmentPlugin, NoOptions, Options
    from bugbout.core.plumbing.testruns.test_runner import TestStyle
    from bugbout.core.race.examining import Assignment, PromptAssignment, examiner_prompt
    from bugbout.core.store.records import Task
