"""The ``commit`` issue source: the last resort, the fix commit's own message."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import BaseModel

from bugbout.issue_sources import Issue, IssueRequest, IssueSourcePlugin, commit_issue, hookimpl


class CommitIssues:
    """Answers every request: the commit's subject is the title, the rest the body."""

    def __init__(self, options: BaseModel | None = None) -> None:
        self.options = options

    def fetch(self, request: IssueRequest) -> Issue:
        """The issue ``request.number`` as the fix commit describes it."""
        return commit_issue(request)


@hookimpl
def bugbout_issue_sources() -> Iterator[IssueSourcePlugin]:
    yield IssueSourcePlugin(
        name="commit",
        factory=CommitIssues,
        description="The fix commit's message, when no other source knows the issue.",
    )
