"""The outcome stream verified in a few calls when nobody touched it, and line by line,
with every finding, when somebody did."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

import pytest

from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import Environment, EnvironmentRequest
from bugbout.core.plumbing.tampering import canaries
from bugbout.core.plumbing.tampering.canaries import key_line, read_outcomes
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.store.records import Outcome, RunStatus

KEY = "k" * 64
PROJECT = ProjectSettings(source="pkg", tests="tests")


def _signed(record: dict[str, object], key: str = KEY) -> bytes:
    """A line as the plugin writes it: the sorted record, its signature put last."""
    body = json.dumps(record, sort_keys=True)
    mac = hmac.new(key.encode(), body.encode(), hashlib.sha256).hexdigest()
    return (body[:-1] + f', "mac": "{mac}"}}').encode()


def _reports(count: int) -> list[dict[str, object]]:
    """``count`` tests' start and call reports, then the summary, numbered."""
    records: list[dict[str, object]] = []
    for test in range(count):
        records.append({"nodeid": f"t.py::test_{test}", "when": "start"})
        records.append({"nodeid": f"t.py::test_{test}", "when": "call", "outcome": "passed"})
    records.append({"summary": {"reports": len(records), "changes": [], "impostors": []}})
    return [{**record, "seq": number} for number, record in enumerate(records)]


def _stream(lines: list[bytes]) -> bytes:
    return key_line(KEY) + b"\n".join(lines) + b"\n"


@pytest.fixture
def environment(plugins: Plugins, tmp_path: Path) -> Environment:
    builder = plugins.create("environment", "interpreter")
    request = EnvironmentRequest(project=PROJECT, tree=tmp_path, home=tmp_path / "home")
    return builder.build(request)  # type: ignore[no-any-return]


def test_a_real_run_s_stream_is_parsed_in_one_call_and_no_line_alone(
    environment: Environment, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def alone(line: bytes, secret: bytes) -> None:
        raise AssertionError(f"a line was verified on its own: {line[:80]!r}")

    parsed: list[bytes] = []
    real = canaries.json.loads
    monkeypatch.setattr(canaries, "_verified", alone)
    monkeypatch.setattr(canaries.json, "loads", lambda text: parsed.append(text) or real(text))
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "tests").mkdir()
    (tree / "tests" / "test_n.py").write_text(
        "import pytest\n\n\n@pytest.mark.parametrize('n', range(40))\n"
        'def test_n(n):\n    assert n != 7, \'m\\u00e9ssage "mac": "quoted"\'\n'
    )
    run = run_tests(environment, tree, ["tests"], project=PROJECT, label="r", timeout=120)
    monkeypatch.undo()

    assert run.status == RunStatus.OK, run.tampering or run.detail
    assert sum(o == Outcome.PASSED for o in run.outcomes.values()) == 39
    assert run.outcomes["tests/test_n.py::test_n[7]"] == Outcome.FAILED
    streams = [text for text in parsed if b"test_n[7]" in text]
    assert len(streams) == 1, f"the stream was parsed in {len(streams)} calls"


def _mutations() -> dict[str, tuple[list[bytes], str]]:
    """A good stream changed in one place each way, and what must be found."""
    records = _reports(30)
    good = [_signed(record) for record in records]
    forged = good[9].replace(b'"outcome": "passed"', b'"outcome": "failed"')
    late = _signed({"nodeid": "t.py::late", "when": "start", "seq": len(good)})
    two = b'{"seq": 5}, {"seq": 6'
    body = two + b"}"
    joined = two + b', "mac": "' + hmac.new(KEY.encode(), body, "sha256").hexdigest().encode()
    return {
        "forged": ([*good[:9], forged, *good[10:]], "outcome line 10 is not bugbout's"),
        "reordered": ([*good[:4], good[5], good[4], *good[6:]], "line 5 is out of sequence"),
        "duplicated": ([*good[:9], good[8], *good[9:]], "line 10 is out of sequence"),
        "unsigned": (
            [*good[:3], json.dumps(records[3], sort_keys=True).encode(), *good[4:]],
            "outcome line 4 is not bugbout's",
        ),
        "other key": ([*good[:7], _signed(records[7], "x" * 64), *good[8:]], "line 8 is not"),
        "after the summary": ([*good, late], "written after the session's summary"),
        "two records in one signed line": (
            [*good[:5], joined + b'"}', *good[7:]],
            "outcome line 6 is not bugbout's",
        ),
        "dropped": ([*good[:3], *good[4:]], "line 4 is out of sequence"),
    }


@pytest.mark.parametrize("mutation", list(_mutations()))
def test_every_touched_line_is_still_found_and_the_others_read(mutation: str) -> None:
    lines, found = _mutations()[mutation]
    stream = read_outcomes(_stream(lines), KEY)
    assert any(found in reason for reason in stream.tampering), stream.tampering
    assert stream.reports[0] == {"nodeid": "t.py::test_0", "when": "start"}
    assert {"nodeid": "t.py::test_29", "when": "call", "outcome": "passed"} in stream.reports


def test_a_stream_nobody_touched_reads_as_the_plugin_wrote_it() -> None:
    records = _reports(30)
    records[3] = {**records[3], "subtest": True, "outcome": "failed", "message": 'é "mac"'}
    stream = read_outcomes(_stream([_signed(record) for record in records]), KEY)
    assert stream.tampering == []
    assert stream.summary == records[-1]["summary"]
    assert len(stream.reports) == len(records) - 1
    assert stream.reports[3] == {
        "nodeid": "t.py::test_1",
        "when": "call",
        "outcome": "failed",
        "subtest": "True",
        "message": 'é "mac"',
    }
