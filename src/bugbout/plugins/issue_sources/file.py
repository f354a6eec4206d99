"""The ``file`` issue source: issues exported to a JSON or JSON Lines file.

Each object has a ``number`` and optionally ``title``, ``body``, ``url`` (or ``html_url``),
``is_pull_request`` (or a truthy ``pull_request``) and ``closes`` (issue numbers). A list
of issues as the GitHub API returns them therefore works as it is.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bugbout.issue_sources import (
    ConfigError,
    Issue,
    IssueRequest,
    IssueSourcePlugin,
    Options,
    hookimpl,
)

JSONL_SUFFIXES = (".jsonl", ".ndjson")
EXAMPLE = '{"number": 12, "title": "...", "body": "..."}'


class FileOptions(Options):
    """Options of the ``file`` issue source."""

    path: Path | None = None
    """The file; a relative path starts at the repository. Without one, no issue is known."""


class FileIssues:
    """Issues read once, when first asked, from a JSON or JSON Lines file."""

    def __init__(self, options: FileOptions) -> None:
        self.options = options
        self._loaded: dict[Path, dict[int, Issue]] = {}

    def fetch(self, request: IssueRequest) -> Issue | None:
        """The issue; for a pull request, the first issue it closes that the file holds."""
        if self.options.path is None:
            return None
        issues = self.issues(request.repository / self.options.path)
        issue = issues.get(request.number)
        if issue is None or not issue.is_pull_request:
            return issue
        for number in issue.closes:
            closed = issues.get(number)
            if closed is not None and not closed.is_pull_request:
                return closed.model_copy(update={"closes": list(issue.closes)})
        return issue

    def issues(self, path: Path) -> dict[int, Issue]:
        """Every issue in ``path`` by number, read on first use."""
        if path not in self._loaded:
            self._loaded[path] = {issue.number: issue for issue in load_issues(path)}
        return self._loaded[path]


def load_issues(path: Path) -> list[Issue]:
    """The issues in a JSON file (a list, or ``{"issues": [...]}``) or a JSON Lines file."""
    import json

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise _error(path, f"cannot be read ({exc.strerror or exc})", "check its path") from None
    except UnicodeDecodeError:
        raise _error(path, "is not UTF-8 text", "save it as UTF-8") from None
    if path.suffix.lower() not in JSONL_SUFFIXES:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            if exc.msg != "Extra data":  # otherwise: one object per line
                raise _error(
                    path, f"line {exc.lineno}: invalid JSON ({exc.msg}, column {exc.colno})"
                ) from None
        else:
            if isinstance(data, dict) and "issues" in data:
                data = data["issues"]
            if not isinstance(data, list):
                raise _error(path, 'holds neither a list of issues nor {"issues": [...]}')
            return [_issue(path, f"item {index}", item) for index, item in enumerate(data, 1)]
    issues = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _error(
                path, f"line {lineno}: invalid JSON ({exc.msg}, column {exc.colno})"
            ) from None
        issues.append(_issue(path, f"line {lineno}", item))
    return issues


def _issue(path: Path, where: str, item: Any) -> Issue:
    if not isinstance(item, dict):
        raise _error(path, f"{where}: expected an object, found {type(item).__name__}")
    number = _number(item.get("number"))
    if number is None:
        raise _error(path, f"{where}: 'number' is missing or not an issue number")
    closes = item.get("closes") or []
    if not isinstance(closes, list) or None in (numbers := [_number(n) for n in closes]):
        raise _error(path, f"{where}: 'closes' must be a list of issue numbers")
    url = item.get("html_url") or item.get("url")
    return Issue(
        number=number,
        title=str(item.get("title") or ""),
        body=str(item.get("body") or ""),
        url=str(url) if url else None,
        is_pull_request=bool(item.get("is_pull_request") or item.get("pull_request")),
        closes=[n for n in numbers if n is not None],
    )


def _number(value: Any) -> int | None:
    """``12``, ``"12"`` or ``"#12"`` → 12; anything else → None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if isinstance(value, str) and value.strip().lstrip("#").isdigit():
        return int(value.strip().lstrip("#")) or None
    return None


def _error(path: Path, problem: str, remedy: str = "") -> ConfigError:
    remedy = remedy or f"write a JSON list or one object per line, like {EXAMPLE}"
    return ConfigError(f"issue-source file: {path}: {problem}; {remedy}")


@hookimpl
def bugbout_issue_sources() -> Iterator[IssueSourcePlugin]:
    yield IssueSourcePlugin(
        name="file",
        factory=FileIssues,
        options=FileOptions,
        description="Issues from a JSON or JSON Lines file (option: path).",
    )
