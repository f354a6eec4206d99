"""A test's plain reports (its start, and its setup, call and teardown with their
outcomes) are laid out by the outcome plugin itself, as json lays them out: four lines
a test need no walk of a dictionary, and each still verifies as written."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import pytest

from bugbout.core.plumbing.tampering.canaries import key_line, read_outcomes
from bugbout.core.plumbing.testruns.testrun import outcomes_plugin_dir
from test_impostors import run_plugin

COUNTING = """
import atexit, json, os, sys

hooks = sys.modules["bugbout_hooks"]
encode, calls = hooks._ENCODE, []


def counted(record):
    calls.append(sorted(record))
    return encode(record)


hooks._ENCODE = counted
atexit.register(lambda: open(os.environ["ENCODED"], "w").write(json.dumps(calls)))
"""
"""A conftest that counts the records the plugin has json encode, and writes them."""
TESTS = """
import pytest


@pytest.mark.parametrize("n", range(6))
def test_adds(n):
    assert n + 1 > n


def test_fails():
    assert 1 == 2


@pytest.mark.skip(reason="not today")
def test_skipped():
    pass
"""


def test_a_run_s_plain_reports_are_laid_out_without_json_s_encoder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text(COUNTING)
    (tmp_path / "tests" / "test_it.py").write_text(TESTS)
    encoded = tmp_path / "encoded"
    monkeypatch.setenv("ENCODED", str(encoded))
    done, stream = run_plugin(Path(sys.executable), tmp_path)
    assert "1 failed, 6 passed, 1 skipped" in done.stdout, done.stdout + done.stderr
    assert stream.summary is not None and not stream.tampering, stream.tampering
    # each test's start, setup, call and teardown; a skipped test has no call
    assert len(stream.reports) == 8 * 4 - 1
    plain = [r for r in stream.reports if "message" not in r]
    assert len(plain) == len(stream.reports) - 2  # the failing call, the skipped setup
    # json encodes what is not plain alone: the two reports that say why, the summary
    calls = json.loads(encoded.read_text())
    assert len(calls) == 3, calls


@pytest.mark.parametrize(
    "nodeid",
    ["tests/test_a.py::test_b", 'tests/t.py::test_q["\\\\\\n"]', "tests/t.py::test_é[✓]"],
)
def test_a_plain_report_is_the_line_json_would_write(
    nodeid: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(outcomes_plugin_dir()))
    key = "k" * 64
    with tempfile.TemporaryFile() as first, tempfile.TemporaryFile() as second:
        for handle in (first, second):
            handle.write(key_line(key))
            handle.flush()
        monkeypatch.setenv("BUGBOUT_OUTCOMES_FD", str(first.fileno()))
        monkeypatch.delitem(sys.modules, "bugbout_hooks", raising=False)
        import bugbout_hooks

        laid, encoded = bugbout_hooks._stream, bugbout_hooks._Stream(second.fileno(), key.encode())
        for when, outcome in [("start", None), ("call", "passed"), ("teardown", "failed")]:
            laid.report(nodeid, when, outcome)
            record = {"nodeid": nodeid, "when": when}
            encoded.emit(record if outcome is None else {**record, "outcome": outcome})
        laid.report(nodeid, "setup", 7)  # not a string: json's
        encoded.emit({"nodeid": nodeid, "when": "setup", "outcome": 7})
        for outcome in ("passed", None, 7):  # a subtest's
            laid.report(nodeid, "call", outcome, True)
            record = {"nodeid": nodeid, "when": "call", "subtest": True}
            encoded.emit(record if outcome is None else {**record, "outcome": outcome})
        for stream in (laid, encoded):
            stream.flush()
        first.seek(0)
        second.seek(0)
        written, expected = first.read(), second.read()
    assert written.split(b"\n", 1)[1] == expected.split(b"\n", 1)[1]
    lines = expected.split(b"\n", 1)[1].splitlines()
    assert [json.loads(line)["nodeid"] for line in lines] == [nodeid] * 7
    assert not read_outcomes(b"\n" + b"\n".join(lines) + b"\n", key).tampering
    del sys.modules["bugbout_hooks"]  # it writes to a file closed now
