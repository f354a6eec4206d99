from pathlib import Path
from typing import Any, ClassVar

from bugbout.issue_sources import IssueRequest
from bugbout.testing.suites import IssueSourceSuite


class Test__TITLE__(IssueSourceSuite):
    plugin = "__NAME__"
    options: ClassVar[dict[str, Any]] = {}  # what the suite builds it with, as in bugbout.yaml

    def test_reads_an_issue_file(self, plugin_under_test: Any, tmp_path: Path) -> None:
        (tmp_path / "issues").mkdir()
        (tmp_path / "issues" / "7.md").write_text("# Crash on empty input\n\nIt crashes.\n")
        issue = plugin_under_test.fetch(IssueRequest(number=7, repository=tmp_path))
        assert (issue.number, issue.title, issue.body) == (7, "Crash on empty input", "It crashes.")
        assert plugin_under_test.fetch(IssueRequest(number=8, repository=tmp_path)) is None
