"""The ``github`` issue source: issues and pull requests from the GitHub REST API.

A token comes from ``GITHUB_TOKEN``, else from the GitHub CLI (``gh auth token``), else
requests are anonymous (60 an hour). When the API cannot be reached the source says so
once and answers nothing more, so a dead network costs seconds, not a timeout per issue.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from pydantic import Field

from bugbout.issue_sources import (
    Issue,
    IssueRequest,
    IssueSourcePlugin,
    IssueSourceUnavailable,
    Options,
    hookimpl,
)

DEFAULT_API_URL = "https://api.github.com"
TOKEN_VARIABLE = "GITHUB_TOKEN"
GH_TIMEOUT = 3.0
"""Seconds ``gh auth token`` may take."""
MAX_CLOSED_LOOKUPS = 3
"""How many of the issues a pull request closes are tried before settling for the PR."""

_CLOSING = re.compile(
    r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?):?\s+"
    r"(?:(?P<slug>[\w.-]+/[\w.-]+)?#(?P<number>\d+)"
    r"|https?://[^\s/]+/(?P<url_slug>[\w.-]+/[\w.-]+)/issues/(?P<url_number>\d+))\b",
    re.IGNORECASE,
)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)

T = TypeVar("T")


class GitHubOptions(Options):
    """Options of the ``github`` issue source."""

    api_url: str = DEFAULT_API_URL
    """The REST API's root; GitHub Enterprise's is ``https://HOST/api/v3``."""
    timeout: float = Field(default=5, gt=0)
    """Seconds one request may take."""


class GitHubIssues:
    """Reads issues of ``request.github`` (``owner/name``); knows nothing without it."""

    def __init__(self, options: GitHubOptions) -> None:
        self.options = options
        self.unavailable: str | None = None
        """Why the API could not be reached, once it could not."""
        self._token: str | None = None
        self._token_read = False

    def fetch(self, request: IssueRequest) -> Issue | None:
        """The issue; for a pull request, the first issue it closes (else the PR itself)."""
        if request.github is None:
            return None
        item = self._get(f"/repos/{request.github}/issues/{request.number}")
        if item is None:
            return None
        issue = _issue(item)
        if not issue.is_pull_request:
            return issue
        issue.closes = closing_references(issue.body, request.github, exclude=issue.number)
        for number in issue.closes[:MAX_CLOSED_LOOKUPS]:
            try:
                closed = self._get(f"/repos/{request.github}/issues/{number}")
            except IssueSourceUnavailable:
                break  # remembered for later requests; the PR is still an answer
            if closed is not None and "pull_request" not in closed:
                return _issue(closed).model_copy(update={"closes": list(issue.closes)})
        return issue

    def _get(self, path: str) -> dict[str, Any] | None:
        """The JSON object at ``path``; ``None`` when GitHub has no such thing."""
        if self.unavailable is not None:
            raise IssueSourceUnavailable(self.unavailable)
        url = self.options.api_url.rstrip("/") + path
        headers, timeout = self._headers(), self.options.timeout
        try:
            return _within(timeout * 2 + 1, lambda: _request(url, headers, timeout))
        except _Unavailable as exc:
            self.unavailable = str(exc)
            raise IssueSourceUnavailable(self.unavailable) from None

    def _headers(self) -> dict[str, str]:
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "bugbout",
        }
        if not self._token_read:
            self._token = github_token(self.options.api_url)
            self._token_read = True
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        return headers


def github_token(api_url: str = DEFAULT_API_URL) -> str | None:
    """``GITHUB_TOKEN``, else the GitHub CLI's token for the API's host, else ``None``."""
    import os
    import shutil
    import subprocess
    from urllib.parse import urlsplit

    token = os.environ.get(TOKEN_VARIABLE, "").strip()
    if token:
        return token
    gh = shutil.which("gh")
    if gh is None:
        return None
    host = urlsplit(api_url).hostname or "github.com"
    host = "github.com" if host == "api.github.com" else host
    try:
        result = subprocess.run(
            [gh, "auth", "token", "--hostname", host],
            capture_output=True,
            text=True,
            timeout=GH_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip() or None if result.returncode == 0 else None


def closing_references(text: str, github: str, exclude: int | None = None) -> list[int]:
    """Issues of ``github`` (``owner/name``) that ``text`` closes: ``Fixes #12``,
    ``closes owner/name#12``, ``resolves https://github.com/owner/name/issues/12``."""
    found: list[int] = []
    for match in _CLOSING.finditer(_COMMENT.sub("", text or "")):
        slug = match["slug"] or match["url_slug"]
        if slug is not None and slug.lower() != github.lower():
            continue
        number = int(match["number"] or match["url_number"])
        if number not in found and number != exclude:
            found.append(number)
    return found


class _Unavailable(Exception):
    """The API cannot answer: the message is a one-line reason."""


def _request(url: str, headers: dict[str, str], timeout: float) -> dict[str, Any] | None:
    import http.client
    import json
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            data = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        if exc.code in (404, 410, 451):  # no such issue, a deleted or a blocked one
            return None
        raise _Unavailable(_http_reason(url, exc)) from None
    except urllib.error.URLError as exc:
        raise _Unavailable(f"cannot reach {_host(url)}: {_reason(exc.reason)}") from None
    except (OSError, http.client.HTTPException) as exc:
        raise _Unavailable(f"cannot reach {_host(url)}: {_reason(exc)}") from None
    except ValueError:
        raise _Unavailable(f"{_host(url)} answered with something other than JSON") from None
    if not isinstance(data, dict):
        raise _Unavailable(f"{_host(url)} answered with a JSON {type(data).__name__}")
    return data


def _within(seconds: float, function: Callable[[], T]) -> T:
    """``function()``, given up on after ``seconds``: a name lookup has no timeout."""
    import threading

    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            outcome.append((True, function()))
        except BaseException as exc:
            outcome.append((False, exc))

    thread = threading.Thread(target=run, name="bugbout-github", daemon=True)
    thread.start()
    thread.join(seconds)
    if not outcome:
        raise _Unavailable(f"no answer within {seconds:g} seconds")
    ok, value = outcome[0]
    if not ok:
        raise value
    result: T = value
    return result


def _http_reason(url: str, exc: Any) -> str:
    """A one-line reason for an HTTP error that makes the API unusable."""
    import contextlib
    import json

    headers = exc.headers or {}
    message = ""
    with contextlib.suppress(ValueError, AttributeError, OSError):
        message = str(json.loads(exc.read() or b"{}").get("message", ""))
    if exc.code == 429 or (exc.code == 403 and headers.get("X-RateLimit-Remaining") == "0"):
        return (
            f"{_host(url)} rate limit exceeded; set {TOKEN_VARIABLE} or run 'gh auth login' "
            "for a higher limit"
        )
    if exc.code == 401:
        return f"{_host(url)} rejected the token (HTTP 401); check {TOKEN_VARIABLE} or gh auth"
    detail = " ".join(message.split())[:120] or exc.reason
    return f"{_host(url)} answered HTTP {exc.code}: {detail}"


def _host(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).netloc or url


def _reason(reason: object) -> str:
    text = " ".join(str(reason).split())
    return text or type(reason).__name__


def _issue(item: dict[str, Any]) -> Issue:
    return Issue(
        number=int(item["number"]),
        title=str(item.get("title") or ""),
        body=str(item.get("body") or ""),
        url=item.get("html_url") or None,
        is_pull_request="pull_request" in item,
    )


@hookimpl
def bugbout_issue_sources() -> Iterator[IssueSourcePlugin]:
    yield IssueSourcePlugin(
        name="github",
        factory=GitHubIssues,
        options=GitHubOptions,
        description="Issues and pull requests from the GitHub API (options: api-url, timeout).",
    )
