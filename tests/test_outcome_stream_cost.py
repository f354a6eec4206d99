"""What a test run costs bugbout beyond pytest, with every check kept: the outcome
stream is verified without writing each line again, the hang watch parses only the
lines it follows, a test file is parsed once for the twins of a task's runs, and the
pytest a builder resolved is not started to ask its version."""

from __future__ import annotations

import ast
import hashlib
import hmac
import json
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import Command, Environment, EnvironmentRequest
from bugbout.core.plumbing.environments.pytest_era import pytest_era
from bugbout.core.plumbing.tampering import canaries, canary_twins
from bugbout.core.plumbing.tampering.canaries import key_line, read_outcomes
from bugbout.core.plumbing.testruns import hung
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.store.records import Outcome, RunStatus

PROJECT = ProjectSettings(source="pkg", tests="tests")
KEY = "k" * 64


@pytest.fixture
def environment(plugins: Plugins, tmp_path: Path) -> Environment:
    builder = plugins.create("environment", "interpreter")
    request = EnvironmentRequest(project=PROJECT, tree=tmp_path, home=tmp_path / "home")
    return builder.build(request)  # type: ignore[no-any-return]


def _tree(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_add.py").write_text(
        textwrap.dedent(
            """\
            import pytest

            from pkg import add


            @pytest.mark.parametrize("n", range(30))
            def test_adds(n):
                assert add(n, 1) == n + 1


            def test_wrong():
                assert add(1, 1) == 3, "m\\u00e9ssage with \\"mac\\": \\"quotes\\""
            """
        )
    )
    return root


def test_every_line_of_a_real_run_verifies_as_written(
    environment: Environment, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(line: bytes, secret: bytes) -> None:
        raise AssertionError(f"a line was parsed and written again: {line[:80]!r}")

    monkeypatch.setattr(canaries, "_verified_anew", refused)
    tree = _tree(tmp_path / "tree")
    run = run_tests(environment, tree, ["tests"], project=PROJECT, label="r", timeout=120)

    assert run.status == RunStatus.OK, run.tampering or run.detail
    assert sum(o == Outcome.PASSED for o in run.outcomes.values()) == 30
    assert run.outcomes["tests/test_add.py::test_wrong"] == Outcome.FAILED


def _signed(record: dict[str, object], secret: bytes) -> bytes:
    """A line as the plugin writes it: the sorted record, its signature put last."""
    body = json.dumps(record, sort_keys=True)
    mac = hmac.new(secret, body.encode(), hashlib.sha256).hexdigest()
    return (body[:-1] + f', "mac": "{mac}"}}').encode()


def test_a_forged_or_moved_line_is_still_refused_and_an_odd_layout_still_read() -> None:
    secret = KEY.encode()
    first = {"nodeid": "t.py::a", "when": "call", "outcome": "passed", "seq": 0}
    second = {"nodeid": "t.py::b", "when": "call", "outcome": "failed", "seq": 1}
    summary = {"summary": {"reports": 2, "changes": [], "impostors": []}, "seq": 2}
    good = [_signed(first, secret), _signed(second, secret), _signed(summary, secret)]
    stream = read_outcomes(key_line(KEY) + b"\n".join(good) + b"\n", KEY)
    assert stream.tampering == [] and [r["nodeid"] for r in stream.reports] == [
        "t.py::a",
        "t.py::b",
    ]

    # the second line's signature on a body that says it passed
    forged = good[1].replace(b'"outcome": "failed"', b'"outcome": "passed"')
    stream = read_outcomes(key_line(KEY) + b"\n".join([good[0], forged, good[2]]), KEY)
    assert any("bad signature" in reason for reason in stream.tampering)
    assert [r["nodeid"] for r in stream.reports] == ["t.py::a"]

    # a signature moved in front of a string that quotes one
    sneaky = b'{"message": "\\"mac\\": \\"' + b"0" * 64 + b'\\"", ' + good[0][1:]
    assert "bad signature" in read_outcomes(sneaky, KEY).tampering[0]

    # lines the key's holder laid out otherwise: the signature among the sorted keys, as
    # the plugin wrote it once, or other spacing (parsed and written again)
    mac = hmac.new(secret, json.dumps(first, sort_keys=True).encode(), hashlib.sha256)
    for odd in (
        json.dumps({"mac": mac.hexdigest(), **first}, sort_keys=True),
        json.dumps({"mac": mac.hexdigest(), **first}, separators=(",", ":")),
    ):
        stream = read_outcomes(odd.encode(), KEY)
        assert stream.tampering == [] and stream.reports[0]["nodeid"] == "t.py::a"


def test_the_hang_watch_parses_only_the_last_test_that_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [
        {"nodeid": "t.py::a", "when": "start", "seq": 0},
        *(
            {"nodeid": "t.py::a", "when": w, "outcome": "passed", "seq": 1}
            for w in ("setup", "call")
        ),
        {"nodeid": "t.py::a", "when": "teardown", "outcome": "passed", "seq": 3},
        {"nodeid": "t.py::b", "when": "start", "seq": 4},
    ]
    path = tmp_path / "outcomes"
    path.write_bytes(b"".join(_signed(line, b"k") + b"\n" for line in lines))
    parsed: list[bytes] = []
    real = hung.json.loads
    monkeypatch.setattr(hung.json, "loads", lambda text: parsed.append(text) or real(text))
    with path.open("rb") as handle:
        watch = hung.HangWatch(handle.fileno(), limit=0)
        assert watch.hung() == "t.py::b"
        assert len(parsed) == 1  # the last start: nothing before it matters, nor setup or call
        more = [
            {"nodeid": "t.py::b", "when": "teardown", "outcome": "passed", "seq": 5},
            {"nodeid": "t.py::c", "when": "start", "seq": 6},
            {"nodeid": "t.py::c", "when": "teardown", "outcome": "passed", "seq": 7},
        ]
        with path.open("ab") as writer:
            writer.write(b"".join(_signed(line, b"k") + b"\n" for line in more[:1]))
        assert watch.hung() is None  # b ended
        with path.open("ab") as writer:
            writer.write(b"".join(_signed(line, b"k") + b"\n" for line in more[1:]))
            writer.write(b'{"nodeid": "t.py::d", "when": "start"')  # not a whole line yet
        assert watch.hung() is None  # c started and ended; d's line is not complete
        with path.open("ab") as writer:
            writer.write(b"}\n")
        assert watch.hung() == "t.py::d"


def test_a_test_file_is_parsed_once_for_the_twins_of_many_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    canary_twins._parsed.cache_clear()
    parses: list[str] = []
    real = ast.parse
    monkeypatch.setattr(
        canary_twins.ast, "parse", lambda text, *a, **k: parses.append(text) or real(text, *a, **k)
    )
    tree = _tree(tmp_path / "tree")
    host = tree / "tests" / "test_add.py"
    original = host.read_bytes()
    for _ in range(4):
        planted = canary_twins.plant_twins(tree, None, ["tests"], lambda module: None)
        assert [h.module for h in planted] == ["tests/test_add.py"]
        assert host.read_bytes() != original  # the twins are in
        canary_twins.restore(tree, planted)
        assert host.read_bytes() == original
    assert len([text for text in parses if "def test_adds" in text]) == 1


@dataclass(frozen=True)
class Resolved:
    """An environment whose builder resolved pytest 3.4.2, and that never runs."""

    key: str = "resolved-pytest-3.4.2"
    description: str = "pytest 3.4.2, resolved"
    versions: dict[str, str] = field(default_factory=lambda: {"pytest": "3.4.2"})

    def command(self, args: list[str], tree: Path, extra_paths: list[Path]) -> Command:
        raise AssertionError(f"pytest was started to ask its version: {args}")


def test_the_pytest_a_builder_resolved_is_not_asked_its_version() -> None:
    era = pytest_era(Resolved())
    assert era.version == (3, 4)
    assert "--rootdir" not in era.options(Path("tree"))  # 3.5 brought it
