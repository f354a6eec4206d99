"""The conformance suite of issue sources."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import pytest

from bugbout.core.mine.issues import IssueRequest, IssueSourceUnavailable
from bugbout.core.store.records import Issue
from bugbout.testing.suites.miners import RepositorySuite, git

if TYPE_CHECKING:
    from bugbout.testing.fixtures import FixedBugRepository

UNKNOWN_ISSUE = 987_654
"""An issue number no repository of the suites has."""
GITHUB_SLUG = "bugbout-conformance/fixed-bug"
"""The ``owner/name`` issue requests carry (no such repository exists)."""


class IssueSourceSuite(RepositorySuite):
    """Contract tests for an issue source (``bugbout_issue_sources``).

    ``fetch(request)`` returns an :class:`~bugbout.core.store.records.Issue`, or ``None`` when
    the source does not know the issue; a source that cannot answer at all (no network,
    a rate limit) raises :class:`~bugbout.core.mine.issues.IssueSourceUnavailable`, and
    nothing else. Set :attr:`known_issue` to an issue number the source must know for the
    fixed-bug repository (its ``issues.json`` holds issue #12).
    """

    kind: ClassVar[str] = "issue-source"
    known_issue: ClassVar[int | None] = None
    """An issue the source must return for the fixed-bug repository; ``None``: none."""

    def request(self, repository: FixedBugRepository, number: int) -> IssueRequest:
        message = git(repository.path, "log", "-1", "--format=%B", repository.fix)
        return IssueRequest(
            number=number, repository=repository.path, github=GITHUB_SLUG, commit_message=message
        )

    def fetch(self, plugin: Any, request: IssueRequest) -> Issue | str | None:
        """The answer, or ``"unavailable"`` when the source says it cannot answer."""
        try:
            issue = plugin.fetch(request)
        except IssueSourceUnavailable as exc:
            assert str(exc).strip(), "IssueSourceUnavailable says why"
            assert "\n" not in str(exc).strip()
            return "unavailable"
        assert issue is None or isinstance(issue, Issue), f"fetch() returned {issue!r}"
        return issue

    def test_an_unknown_issue_is_none_an_issue_or_unavailable(
        self, plugin_under_test: Any, fixed_bug_repository: FixedBugRepository
    ) -> None:
        self.fetch(plugin_under_test, self.request(fixed_bug_repository, UNKNOWN_ISSUE))

    def test_asking_twice_gives_the_same_answer(
        self, plugin_under_test: Any, fixed_bug_repository: FixedBugRepository
    ) -> None:
        for number in (fixed_bug_repository.issue, UNKNOWN_ISSUE):
            request = self.request(fixed_bug_repository, number)
            assert self.fetch(plugin_under_test, request) == self.fetch(plugin_under_test, request)

    def test_does_not_change_the_request(
        self, plugin_under_test: Any, fixed_bug_repository: FixedBugRepository
    ) -> None:
        request = self.request(fixed_bug_repository, fixed_bug_repository.issue)
        before = request.model_dump()
        self.fetch(plugin_under_test, request)
        assert request.model_dump() == before

    def test_knows_the_known_issue(
        self, plugin_under_test: Any, fixed_bug_repository: FixedBugRepository
    ) -> None:
        if self.known_issue is None:
            pytest.skip("known_issue is not set")
        issue = self.fetch(plugin_under_test, self.request(fixed_bug_repository, self.known_issue))
        assert isinstance(issue, Issue), f"issue #{self.known_issue} is unknown"
        assert issue.number == self.known_issue
        assert issue.title.strip()
