"""``bugbout demo --lang js`` for real: the JavaScript example built, its settings written
as ``bugbout init`` writes them, and a whole bout run on it (ground truth with ``node
--test``, the race, cross-examination, the judge, the audit, the reports) with every
address npm or Python could reach pointed at a local listener that records each
connection: the demo makes none."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bugbout.cli.commands import main
from bugbout.core.contract.manager import make_plugins
from bugbout.example.javascript import build_javascript_example

pytestmark = pytest.mark.requires("js-runners")

TESTS = {
    3: "test/stats.test.js::median > averages the two middle values of an even-length list",
    5: "test/stats.test.js::mean > throws a RangeError for an empty list",
    8: "test/parse.test.js::parseNumber > keeps the sign of a negative number",
}
"""Each fixed issue and the test its fix added, as ``node --test`` names it."""
WRITTEN = {
    3: "median > of an even-length list",
    5: "mean > of an empty list throws",
    8: "parseNumber > of a negative number",
}
"""Each issue and the title of the test the correct agent writes for it."""


@pytest.fixture
def listener() -> Iterator[tuple[str, list[bytes]]]:
    """A local address that accepts connections and records what each sends."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    received: list[bytes] = []
    done = threading.Event()

    def accept() -> None:
        while not done.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            with connection:
                connection.settimeout(1)
                try:
                    received.append(connection.recv(200) or b"(connected)")
                except OSError:
                    received.append(b"(connected)")

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}/", received
    done.set()
    thread.join()
    server.close()


def node_titles(repo: Path, test_file: str) -> set[str]:
    """The title paths ``node --test`` prints for ``test_file`` (its TAP report's nested
    subtests, joined with `` > ``)."""
    tap = subprocess.run(
        ["node", "--test", "--test-reporter=tap", test_file],
        cwd=repo, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    path: list[str] = []
    titles = set()
    for indent, title in re.findall(r"^( *)# Subtest: (.*)$", tap, re.MULTILINE):
        path = [*path[: len(indent) // 4], title]
        titles.add(" > ".join(path))
    return titles


def attempts(repo: Path) -> dict[Path, int]:
    """Each attempt's record and when it was written."""
    found = (repo / ".bugbout" / "attempts").rglob("*.json")
    return {path: path.stat().st_mtime_ns for path in found}


def stored(repo: Path, name: str) -> dict:
    return json.loads((repo / ".bugbout" / name).read_text())


@pytest.mark.slow
def test_the_javascript_demo_runs_a_whole_bout_offline(
    tmp_path: Path, listener: tuple[str, list[bytes]]
) -> None:
    address, received = listener
    env = {
        **{key: value for key, value in os.environ.items() if "proxy" not in key.lower()},
        "npm_config_registry": address,
        "npm_config_proxy": address,
        "npm_config_https_proxy": address,
        "HTTP_PROXY": address,
        "HTTPS_PROXY": address,
        "http_proxy": address,
        "https_proxy": address,
    }
    repo = tmp_path / "tally"

    result = subprocess.run(
        [sys.executable, "-m", "bugbout", "demo", "--lang", "js", str(repo)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    assert received == [], "the demo reached for the network"
    tasks = stored(repo, "tasks.json")["tasks"]
    assert sorted((task["issue"]["number"], task["tier"]) for task in tasks) == [
        (3, "issue-fix"), (5, "issue-fix"), (8, "issue-fix"),
    ]  # fmt: skip
    oracles = stored(repo, "oracles.json")
    for task in tasks:
        oracle = oracles[task["id"]]
        assert oracle["status"] == "ok", oracle["reason"]
        assert oracle["fail_to_pass"] == [TESTS[task["issue"]["number"]]]
        assert task["added_tests"] == oracle["fail_to_pass"]
        assert oracle["pass_to_pass"]
    for test_id in {i for oracle in oracles.values() for i in oracle["pass_to_pass"]} | {
        *TESTS.values()
    }:
        test_file, _, title = test_id.partition("::")
        assert title in node_titles(repo, test_file), f"node --test names no {test_id}"
    for task in tasks:
        scores = stored(repo, "resolutions.json")[task["id"]]
        assert {name: score["score"] for name, score in scores["patches"].items()} == {
            "correct": "resolved",
            "wrong": "wrong-fix",
            "breaking": "fixed-but-broke",
            "empty": "no-fix",
        }
        verdict = stored(repo, "verdicts.json")[task["id"]]["majority"]
        assert verdict["pick"] == "correct", verdict["reason"]
        audits = stored(repo, "audits.json")[task["id"]]
        assert audits["correct"]["verdict"] == "resolved"
        assert audits["wrong"]["verdict"] in {"fixed-but-broke", "wrong-fix", "no-fix"}
        [matrix] = [
            json.loads(path.read_text())
            for path in (repo / ".bugbout" / "matrices").glob(f"{task['id']}*.json")
        ]
        [written] = matrix["authors"]["correct"]
        assert written.startswith("test/") and ".test.js::" in written
        assert written.split("::")[1] == WRITTEN[task["issue"]["number"]]
    report = stored(repo, "report.json")
    resolved = {row["contestant"]: row["resolved"] for row in report["agents"]}
    assert resolved == {"correct": 3, "wrong": 0, "breaking": 0, "empty": 0}
    assert "## Agents" in (repo / ".bugbout" / "report.md").read_text()

    raced = attempts(repo)
    again = subprocess.run(
        [sys.executable, "-m", "bugbout", "demo", "--lang", "js", str(repo)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert f"resuming the demo bout in {repo}" in again.stderr
    assert attempts(repo) == raced, "the resumed bout raced again"
    assert received == []

    swept = subprocess.run(
        [sys.executable, "-m", "bugbout", "-m", "judge=majority,strict"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert swept.returncode == 0, swept.stderr
    [summary] = (repo / ".bugbout" / "sweeps").glob("*/summary.json")
    jobs = json.loads(summary.read_text())["jobs"]
    assert sorted(job["judge"] for job in jobs) == ["majority", "strict"]
    for job in jobs:
        assert job["status"] == "ok", job["reason"]
        rates = {row["contestant"]: row["resolved"] for row in job["contestants"]}
        assert rates == {"correct": 3, "wrong": 0, "breaking": 0, "empty": 0}
    assert attempts(repo) == raced, "the sweep raced again"
    assert received == []
    probe = {**env, "npm_config_fetch_retries": "0"}
    subprocess.run(
        ["npm", "view", "left-pad", "version"],
        cwd=tmp_path, env=probe, capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    assert received, "npm asked its registry elsewhere than the listener: the check proves nothing"


def test_the_javascript_settings_are_those_init_writes(tmp_path: Path) -> None:
    repo = build_javascript_example(tmp_path / "tally", make_plugins())
    config = (repo / "bugbout.yaml").read_text()
    assert "  - override environment: npm" in config
    assert (
        "  - override test-runner: javascript   # each era's package.json's (now: node-test)"
        in (config)
    )
    assert 'source: ["src"]' in config
    assert 'tests: "test"' in config
    assert "issue-sources:\n  file: {path: issues.jsonl}" in config
    assert "bugbout.example.javascript_agents, correct]" in config
    manifest = json.loads((repo / "package.json").read_text())
    assert not {"dependencies", "devDependencies"} & set(manifest)
    assert manifest["scripts"]["test"] == "node --test"


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("rust", "`bugbout demo --lang` takes python or js (got 'rust')"),
        ("ts", "a TypeScript demo would need a compiler from the npm registry"),
    ],
)
def test_a_language_without_a_demo_is_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lang: str, said: str
) -> None:
    assert main(["demo", str(tmp_path / "demo"), f"--lang={lang}"]) == 2
    error = capsys.readouterr().err
    assert said in error and len(error.strip().splitlines()) == 1
    assert not (tmp_path / "demo").exists()


def test_a_demo_is_resumed_only_in_its_own_language(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = build_javascript_example(tmp_path / "tally", make_plugins())
    assert main(["demo", str(repo)]) == 2
    error = capsys.readouterr().err
    assert f"holds the js demo: resume it with `bugbout demo --lang js {repo}`" in error
    assert not (repo / ".bugbout").exists()


def test_the_usage_says_how_to_choose_the_language(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--help"]) == 0
    said = capsys.readouterr().out
    assert "--lang js" in said and "node --test" in said and "./bugbout-demo-js" in said


def test_the_javascript_demo_without_node_says_what_to_install(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert main(["demo", "--lang", "js", str(tmp_path / "demo")]) == 2
    error = capsys.readouterr().err
    assert "the JavaScript demo needs Node 20 or later and npm: install them" in error
    assert not (tmp_path / "demo").exists()
