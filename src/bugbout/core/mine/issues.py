"""Issue sources: from the issue a fix names to the task's problem statement."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Protocol

from bugbout.core.contract.errors import BugboutError
from bugbout.core.store.records import Issue, Record


class IssueRequest(Record):
    """What an issue source is asked: one issue of one repository."""

    number: int
    repository: Path
    """The local repository (for sources that read files or commits)."""
    github: str | None = None
    """``owner/name`` on GitHub, when known."""
    commit_message: str = ""
    """The fix commit's full message, for the last-resort ``commit`` source."""


class IssueSourceUnavailable(Exception):
    """The source cannot answer at all right now (no network, rate limit): ask the next."""


class IssueSource(Protocol):
    """What an issue source plugin's factory returns."""

    def fetch(self, request: IssueRequest) -> Issue | None:
        """The issue, or ``None`` when this source does not know it."""
        ...


# -- problem statements -------------------------------------------------------------------

FIX_SECTION_TITLES = frozenset({
    "solution", "proposed solution", "suggested fix", "proposed fix", "fix", "the fix",
    "changes", "changes made", "changes proposed", "proposed changes", "summary of changes",
    "implementation", "implementation details", "how", "how to fix", "approach",
    "what this pr does", "what does this pr do",
})  # fmt: skip
"""Section titles under which authors describe their fix: such sections are removed."""

DIFF_INFO_STRINGS = frozenset({"diff", "patch"})
DIFF_STARTS = ("diff --git", "--- a/", "+++ b/")
PSEUDO_LEVEL = 7
"""The level of a bold or ``Title:`` line: ended by any heading."""

_FENCE = re.compile(r"^\s*(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_ATX = re.compile(r"^ {0,3}(?P<hashes>#{1,6})(?:[ \t]+(?P<text>.*?))?(?:[ \t]+#+)?[ \t]*$")
_BOLD = re.compile(r"^ {0,3}(?P<mark>\*\*|__)(?P<text>[^*_\s].*?)(?P=mark)[ \t]*:?[ \t]*$")
_COLON = re.compile(r"^ {0,3}(?P<text>[A-Za-z][\w '\u2019/()&?-]{0,60}?)[ \t]*:[ \t]*$")


def clean_problem_statement(text: str) -> str:
    """An issue body without HTML comments, diff blocks and sections describing a fix."""
    lines: list[str] = []
    skipping: int | None = None  # the level of the fix section being removed
    blank = False
    for block in _blocks(text.replace("\r\n", "\n").replace("\r", "\n")):
        if isinstance(block, list):  # a fenced code block
            if skipping is None and not _is_diff(block):
                lines.extend(block)
                blank = False
            continue
        heading = _heading(block)
        if heading is not None:
            level, title = heading
            if skipping is not None and (skipping == PSEUDO_LEVEL or level <= skipping):
                skipping = None
            if skipping is None and title in FIX_SECTION_TITLES:
                skipping = level
        if skipping is not None:
            continue
        if not block.strip():
            if not blank and lines:
                lines.append("")
            blank = True
            continue
        lines.append(block)
        blank = False
    return "\n".join(lines).rstrip()


def problem_statement(issue: Issue) -> str:
    """What agents are told: the issue's title, a blank line and its cleaned text."""
    return "\n\n".join(filter(None, (issue.title.strip(), clean_problem_statement(issue.body))))


def commit_issue(request: IssueRequest) -> Issue:
    """The last resort: the fix commit's subject as the title, the rest as the body."""
    title, _, body = request.commit_message.strip().partition("\n")
    return Issue(number=request.number, title=title.strip(), body=body.strip())


def _blocks(text: str) -> Iterator[str | list[str]]:
    """Lines outside fenced code blocks (HTML comments removed), and each fenced block whole."""
    lines = iter(text.split("\n"))
    for line in lines:
        fence = _FENCE.match(line)
        if fence is None or (fence["fence"][0] == "`" and "`" in fence["info"]):
            yield from _uncommented(line, lines)  # not a fence: ```code``` is inline code
            continue
        block = [line]
        mark = fence["fence"]
        for inner in lines:
            block.append(inner)
            stripped = inner.strip()
            if stripped.startswith(mark) and not stripped.strip(mark[0]):
                break
        yield block


def _uncommented(line: str, lines: Iterator[str]) -> Iterator[str]:
    """``line`` without HTML comments, reading on from ``lines`` while a comment is open."""
    kept, rest = "", line
    while (start := rest.find("<!--")) >= 0:
        kept, opened = kept + rest[:start], rest[start:]
        consumed: list[str] = []
        tail = opened[4:]
        while (end := tail.find("-->")) < 0:
            following = next(lines, None)
            if following is None:  # never closed: not a comment after all, keep it as written
                yield kept + opened
                yield from consumed
                return
            consumed.append(following)
            tail = following
        rest = tail[end + 3 :]
    yield kept + rest


def _is_diff(block: list[str]) -> bool:
    fence = _FENCE.match(block[0])
    info = fence["info"].strip().split(maxsplit=1) if fence else []
    if info and info[0].lower() in DIFF_INFO_STRINGS:
        return True
    content = [line for line in block[1:] if line.strip()]
    return bool(content) and content[0].lstrip().startswith(DIFF_STARTS)


def _heading(line: str) -> tuple[int, str] | None:
    """A heading's level (1-6, or :data:`PSEUDO_LEVEL`) and normalised title."""
    if match := _ATX.match(line):
        return len(match["hashes"]), _title(match["text"] or "")
    if match := _BOLD.match(line) or _COLON.match(line):
        return PSEUDO_LEVEL, _title(match["text"])
    return None


def _title(text: str) -> str:
    """``**Proposed  Changes:**`` → ``proposed changes``."""
    text = re.sub(r"[*_`]", "", text)
    text = re.sub(r"^\W+|[\s:?.!]+$", "", text)
    return " ".join(text.lower().split())


# -- asking the sources in turn -----------------------------------------------------------


class IssueResolver:
    """Asks issue sources in order; a source that fails is warned about once and skipped."""

    def __init__(
        self, sources: Sequence[tuple[str, IssueSource]], warn: Callable[[str], None]
    ) -> None:
        self.sources = list(sources)
        self.warn = warn
        self.skipped: dict[str, str] = {}
        """Sources given up on, with why."""

    def resolve(self, request: IssueRequest) -> tuple[Issue, str]:
        """The issue and the name of the source that knew it (``commit`` when none did)."""
        for name, source in self.sources:
            if name in self.skipped:
                continue
            try:
                issue = source.fetch(request)
            except IssueSourceUnavailable as exc:
                self._skip(name, f"issue source {name!r} unavailable ({_one_line(exc)})")
                continue
            except BugboutError:
                raise  # the user's configuration is wrong: say so rather than carry on
            except Exception as exc:  # a broken plugin must not stop mining
                self._skip(
                    name, f"issue source {name!r} failed ({type(exc).__name__}: {_one_line(exc)})"
                )
                continue
            if issue is not None:
                return issue, name
        return commit_issue(request), "commit"

    def _skip(self, name: str, reason: str) -> None:
        self.skipped[name] = reason
        self.warn(f"{reason}; using the next source")


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__
