"""Mining: what a miner is asked, and the rules for reading fixes out of commit messages."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol

from bugbout.core.records import IssueRef, Record, TaskSet
from bugbout.core.settings import ProjectSettings, TasksSettings

TitleLookup = Callable[[int], str | None]
"""Gives the title of a pull request or issue by number, when a source knows it."""

_URL = re.compile(r"https?://github\.com/[\w.-]+/[\w.-]+/(?:issues|pull)/(\d+)\b", re.IGNORECASE)
_CLOSING = re.compile(
    r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b:?\s+"
    r"(?:(?:[\w.-]+/[\w.-]+)?#(\d+)\b|(https?://github\.com/[\w.-]+/[\w.-]+/(?:issues|pull)/(\d+)))",
    re.IGNORECASE,
)
_HASH = re.compile(r"(?<![&#])#(\d+)\b")
"""``#N`` anywhere but in an HTML character reference (``&#123;``)."""
_GH = re.compile(r"(?<![\w-])gh-(\d+)\b", re.IGNORECASE)


class MiningRequest(Record):
    """What a miner is asked: the repository and the project's and tasks' settings."""

    repository: Path
    project: ProjectSettings
    tasks: TasksSettings


class Miner(Protocol):
    """What a miner plugin's factory returns."""

    def mine(self, request: MiningRequest, titles: TitleLookup | None = None) -> TaskSet:
        """The tasks found, newest first, with how much history was examined and why the
        rest was left out. Problem statements are filled in later, from issue sources."""
        ...


def fix_title_pattern(words: Iterable[str]) -> re.Pattern[str]:
    """A case-insensitive, word-boundary match on any of ``words``."""
    alternatives = "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True))
    return re.compile(rf"\b(?:{alternatives})\b", re.IGNORECASE)


def issue_references(*texts: str) -> list[IssueRef]:
    """The issues and pull requests ``texts`` name, most telling first.

    References with a closing keyword (``Fixes #12``) come first, then the others in
    the order they appear; each number appears once.
    """
    closing: list[IssueRef] = []
    plain: list[tuple[int, IssueRef]] = []
    for text_index, text in enumerate(texts):
        for match in _CLOSING.finditer(text):
            number = match.group(1) or match.group(3)
            closing.append(IssueRef(number=int(number), url=match.group(2), closing=True))
        found: list[tuple[int, IssueRef]] = []
        for match in _URL.finditer(text):
            found.append((match.start(), IssueRef(number=int(match.group(1)), url=match.group(0))))
        for pattern in (_HASH, _GH):
            for match in pattern.finditer(text):
                found.append((match.start(), IssueRef(number=int(match.group(1)))))
        plain.extend((text_index * 10**9 + start, ref) for start, ref in sorted(found, key=_first))
    seen: set[int] = set()
    ordered: list[IssueRef] = []
    for ref in [*closing, *(ref for _, ref in sorted(plain, key=_first))]:
        if ref.number not in seen:
            seen.add(ref.number)
            ordered.append(ref)
    return ordered


def _first(item: tuple[int, IssueRef]) -> int:
    return item[0]
