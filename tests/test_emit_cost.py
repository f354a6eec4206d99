"""What the outcome plugin's lines cost a run: a test's start is written as it starts,
its setup and call with its teardown, so each test costs the outcome file two writes,
and the stream still reads whole (``bugbout_hooks``)."""

from __future__ import annotations

import json
from pathlib import Path

from bugbout.core.store.records import Outcome, RunStatus
from small_runs import run_small

COUNTING = """\
import json, os

_fd = int(os.environ["BUGBOUT_OUTCOMES_FD"])
_write = os.write
_writes = []


def _counted(fd, data):
    if fd == _fd:
        _writes.append(data.count(b"\\n"))
    return _write(fd, data)


os.write = _counted


def pytest_unconfigure(config):
    with open({log!r}, "w") as log:
        json.dump(_writes, log)
"""
"""A conftest that counts the writes to the outcome file (and the lines each holds)."""
TESTS = (
    "def test_a():\n    pass\n\n\ndef test_b():\n    assert 1 == 2\n\n\ndef test_c():\n    pass\n"
)


def test_each_test_costs_the_outcome_file_two_writes(tmp_path: Path) -> None:
    log = tmp_path / "writes.json"
    conftest = COUNTING.replace("{log!r}", repr(str(log)))
    run = run_small(tmp_path, {"conftest.py": conftest, "test_it.py": TESTS}, hostile=False)

    assert run.status == RunStatus.OK, run.tampering or run.detail
    assert run.outcomes == {
        "tests/test_it.py::test_a": Outcome.PASSED,
        "tests/test_it.py::test_b": Outcome.FAILED,
        "tests/test_it.py::test_c": Outcome.PASSED,
    }
    writes = json.loads(log.read_text())
    tests = len(run.outcomes) + 4  # the canaries: two modules of two tests
    # a start, then setup, call and teardown together; the summary is written after
    assert writes == [1, 3] * tests + [1], writes
