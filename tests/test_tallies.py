"""pytest's own tally against the outcome stream: real pytest output, parsed; a stream
that reports fewer failures or errors than pytest counted is caught."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bugbout.core.plumbing.tampering.tallies import pytest_tally, tally_mismatch

TESTS = """
import pytest

@pytest.fixture
def broken():
    raise RuntimeError("setup")

def test_fails():
    assert 1 == 2

def test_passes():
    pass

def test_errors(broken):
    pass
"""


def _pytest_output(tmp_path: Path) -> str:
    (tmp_path / "test_tally.py").write_text(TESTS)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_tally.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    return result.stdout


def _report(nodeid: str, when: str, outcome: str) -> dict[str, str]:
    return {"nodeid": f"test_tally.py::{nodeid}", "when": when, "outcome": outcome}


HONEST = [
    _report("test_fails", "call", "failed"),
    _report("test_passes", "call", "passed"),
    _report("test_errors", "setup", "failed"),
]


def test_the_tally_of_a_real_run_is_read(tmp_path: Path) -> None:
    tally = pytest_tally(_pytest_output(tmp_path))
    assert tally is not None
    assert (tally["failed"], tally["passed"], tally["error"]) == (1, 1, 1)


def test_an_honest_stream_agrees_with_pytest(tmp_path: Path) -> None:
    assert tally_mismatch(_pytest_output(tmp_path), HONEST) is None


def test_a_failure_turned_into_a_pass_is_caught(tmp_path: Path) -> None:
    forged = [_report("test_fails", "call", "passed"), *HONEST[1:]]
    said = tally_mismatch(_pytest_output(tmp_path), forged)
    assert said is not None and "pytest counted 1 failed" in said


def test_an_error_turned_into_a_pass_is_caught(tmp_path: Path) -> None:
    forged = [*HONEST[:2], _report("test_errors", "setup", "passed")]
    said = tally_mismatch(_pytest_output(tmp_path), forged)
    assert said is not None and "pytest counted 1 error" in said


def test_no_tally_is_no_evidence() -> None:
    assert pytest_tally("FAILED test_x.py::t - assert 1 == 2\n") is None
    assert tally_mismatch("", []) is None
    assert pytest_tally("===== 2 failed, 1 deselected in 0.12 seconds =====") == {
        "failed": 2,
        "deselected": 1,
    }  # pytest before 5
