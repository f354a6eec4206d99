"""The stable API for issue source plugins: their record, ``hookimpl``, ``Options``, and
the request, the issue it returns, and how to say the source is unavailable.

An issue source plugin imports these names from here; ``bugbout.core`` is private and may
change in any release. Each name is imported the first time it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bugbout.core.contract.exports import lazy_exports

__all__ = [
    "ConfigError",
    "Issue",
    "IssueRequest",
    "IssueSource",
    "IssueSourcePlugin",
    "IssueSourceUnavailable",
    "NoOptions",
    "Options",
    "commit_issue",
    "create_plugin",
    "hookimpl",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "ConfigError": "bugbout.core.contract.errors",
        "Issue": "bugbout.core.store.records",
        "IssueRequest": "bugbout.core.mine.issues",
        "IssueSource": "bugbout.core.mine.issues",
        "IssueSourcePlugin": "bugbout.core.contract.types",
        "IssueSourceUnavailable": "bugbout.core.mine.issues",
        "NoOptions": "bugbout.core.contract.types",
        "Options": "bugbout.core.contract.types",
        "commit_issue": "bugbout.core.mine.issues",
        "create_plugin": "bugbout.core.contract.manager",
        "hookimpl": "bugbout.core.contract.hookspecs",
    },
)

if TYPE_CHECKING:
    from bugbout.core.contract.errors import ConfigError
    from bugbout.core.contract.hookspecs import hookimpl
    from bugbout.core.contract.manager import create_plugin
    from bugbout.core.contract.types import IssueSourcePlugin, NoOptions, Options
    from bugbout.core.mine.issues import (
        IssueRequest,
        IssueSource,
        IssueSourceUnavailable,
        commit_issue,
    )
    from bugbout.core.store.records import Issue
