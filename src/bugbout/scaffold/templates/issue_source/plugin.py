"""The ``__NAME__`` issue source: issues kept as Markdown files in the repository.

An issue source turns the number a fix names into the issue's title and text, which
become the task's problem statement; it returns ``None`` for an issue it does not know,
and bugbout asks the next source. This one reads ``DIRECTORY/<number>.md``: the first
line is the title (a leading ``#`` is dropped), the rest the body. Replace ``fetch``
with a call to your tracker's API (raise ``IssueSourceUnavailable`` when it is down).
"""

from __future__ import annotations

from collections.abc import Iterator

from bugbout.issue_sources import Issue, IssueRequest, IssueSourcePlugin, Options, hookimpl


class __TITLE__Options(Options):
    """Options of the ``__NAME__`` issue source."""

    directory: str = "issues"
    """The directory of the issue files, relative to the repository."""


class __TITLE__Issues:
    """Issue ``N`` is the file ``DIRECTORY/N.md``."""

    def __init__(self, options: __TITLE__Options | None = None) -> None:
        self.options = options or __TITLE__Options()

    def fetch(self, request: IssueRequest) -> Issue | None:
        path = request.repository / self.options.directory / f"{request.number}.md"
        if not path.is_file():
            return None
        title, _, body = path.read_text(encoding="utf-8").partition("\n")
        return Issue(number=request.number, title=title.lstrip("#").strip(), body=body.strip())


@hookimpl
def bugbout_issue_sources() -> Iterator[IssueSourcePlugin]:
    yield IssueSourcePlugin(
        name="__NAME__",
        factory=__TITLE__Issues,
        options=__TITLE__Options,
        description="issues as Markdown files in the repository (option: directory)",
    )
