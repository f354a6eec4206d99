"""Issue sources (github, file, commit) and the resolver that chains them; github talks to
a real HTTP server on 127.0.0.1 replaying the responses in ``tests/data/github``."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pluggy
import pytest

from bugbout.core.contract import hookspecs
from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.manager import Plugins
from bugbout.core.mine.issues import IssueRequest, IssueResolver, IssueSourceUnavailable
from bugbout.core.store.records import Issue
from bugbout.plugins.issue_sources import commit, file, github

DATA = Path(__file__).parent / "data" / "github"
SLUG = "acme/widgets"


# -- fixtures -----------------------------------------------------------------------------


@pytest.fixture
def plugins() -> Plugins:
    """A plugin manager holding only the built-in issue sources."""
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    plugins = Plugins(pm)
    for module in (github, file, commit):
        plugins.register(module, name=module.__name__, distribution="bugbout")
    return plugins


@pytest.fixture(autouse=True)
def no_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No GITHUB_TOKEN and no ``gh`` on PATH, unless a test puts them there."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


@dataclass
class FakeGitHub:
    """Serves recorded responses by path and records what was asked."""

    url: str = ""
    routes: dict[str, tuple[int, Any, dict[str, str]]] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def add(self, path: str, status: int, data: str | dict[str, Any], **headers: str) -> None:
        body = json.loads((DATA / data).read_text()) if isinstance(data, str) else data
        self.routes[path] = (status, body, headers)

    @property
    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()
    not_found = json.loads((DATA / "not-found.json").read_text())

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fake.requests.append((self.path, dict(self.headers)))
            status, body, headers = fake.routes.get(self.path, (404, not_found, {}))
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    fake.add(f"/repos/{SLUG}/issues/12", 200, "issue-12.json")
    fake.add(f"/repos/{SLUG}/issues/34", 200, "pull-34.json")
    fake.add(f"/repos/{SLUG}/issues/35", 200, "pull-35.json")
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A server that accepts connections and never answers."""
    sock = socket.create_server(("127.0.0.1", 0), backlog=16)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def request(
    number: int, tmp_path: Path, message: str = "", slug: str | None = SLUG
) -> IssueRequest:
    return IssueRequest(number=number, repository=tmp_path, github=slug, commit_message=message)


# -- registration -------------------------------------------------------------------------


def test_the_three_sources_are_registered(plugins: Plugins) -> None:
    assert set(plugins.of_kind("issue-source")) == {"github", "file", "commit"}
    assert not plugins.problems


def test_options_are_dashed_and_misspellings_rejected(plugins: Plugins) -> None:
    source = plugins.create("issue-source", "github", {"api-url": "http://x", "timeout": 2})
    assert source.options.api_url == "http://x"
    assert source.options.timeout == 2
    with pytest.raises(ConfigError, match=r"api-url"):
        plugins.create("issue-source", "github", {"api-ur": "http://x"})


# -- github -------------------------------------------------------------------------------


def test_github_fetches_an_issue(plugins: Plugins, fake_github: FakeGitHub, tmp_path: Path) -> None:
    source = plugins.create("issue-source", "github", {"api-url": fake_github.url})
    issue = source.fetch(request(12, tmp_path))
    assert issue.number == 12
    assert issue.title == "parse_size('1.5k') raises ValueError"
    assert issue.url == "https://github.com/acme/widgets/issues/12"
    assert "rejects sizes with a decimal point" in issue.body
    assert not issue.is_pull_request
    path, headers = fake_github.requests[0]
    assert path == "/repos/acme/widgets/issues/12"
    assert headers["Accept"] == "application/vnd.github+json"
    assert "Authorization" not in headers


def test_a_pull_request_gives_the_issue_it_closes(
    plugins: Plugins, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    source = plugins.create("issue-source", "github", {"api-url": fake_github.url})
    issue = source.fetch(request(34, tmp_path))
    assert issue.number == 12
    assert issue.title == "parse_size('1.5k') raises ValueError"
    assert "Describe the bug" in issue.body
    assert issue.url == "https://github.com/acme/widgets/issues/12"
    assert not issue.is_pull_request
    assert issue.closes == [12]  # other/project#5 and the commented-out #1 are not ours
    assert fake_github.paths == ["/repos/acme/widgets/issues/34", "/repos/acme/widgets/issues/12"]


def test_a_pull_request_whose_issue_is_missing_is_returned_itself(
    plugins: Plugins, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    source = plugins.create("issue-source", "github", {"api-url": fake_github.url})
    issue = source.fetch(request(35, tmp_path))
    assert issue.number == 35
    assert issue.is_pull_request
    assert issue.closes == [77]
    assert issue.title == "Fix crash on empty config"


def test_unknown_issue_or_repository_is_none(
    plugins: Plugins, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    source = plugins.create("issue-source", "github", {"api-url": fake_github.url})
    assert source.fetch(request(999, tmp_path)) is None
    assert source.fetch(request(12, tmp_path, slug=None)) is None
    assert fake_github.paths == ["/repos/acme/widgets/issues/999"]
    assert source.fetch(request(12, tmp_path)) is not None  # a 404 does not disable it


def test_github_token_is_sent(
    plugins: Plugins, fake_github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    source = plugins.create("issue-source", "github", {"api-url": fake_github.url})
    source.fetch(request(12, tmp_path))
    assert fake_github.requests[0][1]["Authorization"] == "Bearer ghp_secret"


def test_github_cli_token_is_used_without_github_token(
    plugins: Plugins, fake_github: FakeGitHub, tmp_path: Path, no_credentials: Path
) -> None:
    called = tmp_path / "gh-args"
    gh = no_credentials / "gh"
    gh.write_text(f'#!/bin/sh\necho "$@" > {called}\necho gho_from_cli\n')
    gh.chmod(0o755)
    source = plugins.create("issue-source", "github", {"api-url": fake_github.url})
    source.fetch(request(12, tmp_path))
    source.fetch(request(34, tmp_path))
    assert called.read_text().split() == ["auth", "token", "--hostname", "127.0.0.1"]
    assert {headers["Authorization"] for _, headers in fake_github.requests} == {
        "Bearer gho_from_cli"
    }


def test_rate_limit_makes_the_source_unavailable_once_and_for_all(
    plugins: Plugins, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    fake_github.add(
        f"/repos/{SLUG}/issues/50", 403, "rate-limited.json", **{"X-RateLimit-Remaining": "0"}
    )
    source = plugins.create("issue-source", "github", {"api-url": fake_github.url})
    with pytest.raises(IssueSourceUnavailable, match="rate limit exceeded; set GITHUB_TOKEN"):
        source.fetch(request(50, tmp_path))
    with pytest.raises(IssueSourceUnavailable, match="rate limit"):
        source.fetch(request(12, tmp_path))
    assert fake_github.paths == ["/repos/acme/widgets/issues/50"]


def test_server_error_makes_the_source_unavailable(
    plugins: Plugins, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    fake_github.add(f"/repos/{SLUG}/issues/51", 502, {"message": "Server Error"})
    source = plugins.create("issue-source", "github", {"api-url": fake_github.url})
    with pytest.raises(IssueSourceUnavailable, match="HTTP 502: Server Error"):
        source.fetch(request(51, tmp_path))


@pytest.mark.parametrize(
    "api_url", [pytest.param("closed-port", id="refused"), "http://nonexistent.invalid"]
)
def test_offline_github_falls_over_to_the_next_source_with_one_warning(
    plugins: Plugins, tmp_path: Path, api_url: str
) -> None:
    if api_url == "closed-port":
        api_url = closed_port_url()
    warnings: list[str] = []
    resolver = IssueResolver(
        [
            ("github", plugins.create("issue-source", "github", {"api-url": api_url})),
            ("file", plugins.create("issue-source", "file")),
            ("commit", plugins.create("issue-source", "commit")),
        ],
        warn=warnings.append,
    )
    start = time.monotonic()
    results = [
        resolver.resolve(request(n, tmp_path, f"Fix bug {n} (#{n})\n\nDetails {n}."))
        for n in (1, 2, 3, 4)
    ]
    assert time.monotonic() - start < 10  # a hang guard, not a benchmark
    assert [name for _, name in results] == ["commit"] * 4
    assert results[1][0] == Issue(number=2, title="Fix bug 2 (#2)", body="Details 2.")
    assert len(warnings) == 1
    assert warnings[0].startswith("issue source 'github' unavailable (")
    assert warnings[0].endswith("); using the next source")
    assert "\n" not in warnings[0]


def test_a_server_that_never_answers_times_out(
    plugins: Plugins, silent_server: str, tmp_path: Path
) -> None:
    source = plugins.create("issue-source", "github", {"api-url": silent_server, "timeout": 1})
    start = time.monotonic()
    with pytest.raises(IssueSourceUnavailable, match=r"timed out|no answer"):
        source.fetch(request(12, tmp_path))
    with pytest.raises(IssueSourceUnavailable):
        source.fetch(request(13, tmp_path))
    assert time.monotonic() - start < 8


def test_closing_references() -> None:
    body = (
        "Closes #1. fixed: #2, Resolves acme/widgets#3 and resolved ACME/Widgets#4;\n"
        "fixes https://github.com/acme/widgets/issues/5 fixes other/repo#6 "
        "see #7, prefixes #8, fixes #1 again <!-- fixes #9 -->"
    )
    assert github.closing_references(body, SLUG) == [1, 2, 3, 4, 5]
    assert github.closing_references("Fixes #3", SLUG, exclude=3) == []


# -- resolver -----------------------------------------------------------------------------


class Broken:
    def __init__(self) -> None:
        self.calls = 0

    def fetch(self, request: IssueRequest) -> Issue | None:
        self.calls += 1
        raise RuntimeError("boom\nwith a second line")


class Knows:
    def __init__(self, *numbers: int) -> None:
        self.numbers = numbers

    def fetch(self, request: IssueRequest) -> Issue | None:
        if request.number in self.numbers:
            return Issue(number=request.number, title=f"known {request.number}")
        return None


def test_resolver_asks_in_order_and_skips_a_broken_source(tmp_path: Path) -> None:
    warnings: list[str] = []
    broken = Broken()
    resolver = IssueResolver(
        [("broken", broken), ("known", Knows(1)), ("commit", commit.CommitIssues())],
        warn=warnings.append,
    )
    assert resolver.resolve(request(1, tmp_path)) == (Issue(number=1, title="known 1"), "known")
    issue, name = resolver.resolve(request(2, tmp_path, "Fix it\n\nbecause\n"))
    assert (issue.title, issue.body, name) == ("Fix it", "because", "commit")
    assert broken.calls == 1
    assert warnings == [
        "issue source 'broken' failed (RuntimeError: boom with a second line); "
        "using the next source"
    ]


def test_resolver_falls_back_to_the_commit_message(tmp_path: Path) -> None:
    resolver = IssueResolver([("known", Knows())], warn=pytest.fail)
    issue, name = resolver.resolve(request(7, tmp_path, "Fix overflow (#7)"))
    assert (issue, name) == (Issue(number=7, title="Fix overflow (#7)"), "commit")


def test_resolver_lets_configuration_errors_through(tmp_path: Path) -> None:
    (tmp_path / "issues.json").write_text("[{")
    source = file.FileIssues(file.FileOptions(path=Path("issues.json")))
    resolver = IssueResolver([("file", source)], warn=pytest.fail)
    with pytest.raises(ConfigError, match=r"issues\.json"):
        resolver.resolve(request(1, tmp_path))


# -- file ---------------------------------------------------------------------------------

ISSUES = [
    {"number": 12, "title": "Crash on empty input", "body": "It crashes.", "labels": ["bug"]},
    {"number": 34, "title": "Handle empty input", "is_pull_request": True, "closes": [12]},
    {"number": 35, "title": "Unrelated PR", "pull_request": {"url": "x"}, "closes": ["#99"]},
    {"number": 40, "title": "No body"},
]


@pytest.mark.parametrize("layout", ["list", "object", "jsonl"])
def test_file_source_reads_json_and_jsonl(plugins: Plugins, tmp_path: Path, layout: str) -> None:
    if layout == "jsonl":
        path = tmp_path / "issues.jsonl"
        path.write_text("\n".join(json.dumps(item) for item in ISSUES) + "\n\n")
    else:
        path = tmp_path / "data" / "issues.json"
        path.parent.mkdir()
        path.write_text(json.dumps(ISSUES if layout == "list" else {"issues": ISSUES}, indent=2))
    source = plugins.create("issue-source", "file", {"path": str(path.relative_to(tmp_path))})
    assert source.fetch(request(12, tmp_path)) == Issue(
        number=12, title="Crash on empty input", body="It crashes."
    )
    assert source.fetch(request(40, tmp_path)) == Issue(number=40, title="No body")
    assert source.fetch(request(41, tmp_path)) is None
    closed = source.fetch(request(34, tmp_path))  # a PR: the issue it closes
    assert (closed.number, closed.title, closed.is_pull_request) == (
        12,
        "Crash on empty input",
        False,
    )
    pr = source.fetch(request(35, tmp_path))  # the issue it closes is not in the file
    assert (pr.number, pr.is_pull_request, pr.closes) == (35, True, [99])


def test_file_source_is_read_once(tmp_path: Path) -> None:
    path = tmp_path / "issues.json"
    path.write_text(json.dumps([{"number": 1, "title": "first"}]))
    source = file.FileIssues(file.FileOptions(path=path))
    assert source.fetch(request(1, tmp_path)).title == "first"
    path.write_text("not json at all")
    assert source.fetch(request(1, tmp_path)).title == "first"


def test_file_source_without_a_path_knows_nothing(plugins: Plugins, tmp_path: Path) -> None:
    assert plugins.create("issue-source", "file").fetch(request(1, tmp_path)) is None


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("issues.jsonl", '{"number": 1}\n{"number": 2,}\n', r"line 2: invalid JSON"),
        ("issues.json", '[\n{"number": 1},\n{"number" 2}\n]', r"line 3: invalid JSON"),
        ("issues.jsonl", '{"number": 1}\n\n{"title": "x"}\n', r"line 3: 'number' is missing"),
        ("issues.json", '[{"number": 1}, 7]', r"item 2: expected an object"),
        ("issues.json", '{"number": 1, "title": "x"}', r"holds neither a list"),
        ("issues.json", '[{"number": 1, "closes": 3}]', r"'closes' must be a list"),
    ],
)
def test_malformed_file_is_a_one_line_config_error(
    tmp_path: Path, name: str, text: str, problem: str
) -> None:
    (tmp_path / name).write_text(text)
    source = file.FileIssues(file.FileOptions(path=Path(name)))
    with pytest.raises(ConfigError) as info:
        source.fetch(request(1, tmp_path))
    message = str(info.value)
    assert message.startswith(f"issue-source file: {tmp_path / name}: ")
    assert len(message.splitlines()) == 1
    assert re.search(problem, message)
    assert "like {" in message  # says what a valid file looks like


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    source = file.FileIssues(file.FileOptions(path=Path("absent.json")))
    with pytest.raises(ConfigError, match=r"absent.json: cannot be read \(No such file"):
        source.fetch(request(1, tmp_path))


# -- commit -------------------------------------------------------------------------------


def test_commit_source_uses_the_message(plugins: Plugins, tmp_path: Path) -> None:
    source = plugins.create("issue-source", "commit")
    message = "  Fix off-by-one in pager (#31)\n\nThe last page was dropped.\n\nMore.\n"
    assert source.fetch(request(31, tmp_path, message)) == Issue(
        number=31, title="Fix off-by-one in pager (#31)", body="The last page was dropped.\n\nMore."
    )
    assert source.fetch(request(5, tmp_path)) == Issue(number=5)
