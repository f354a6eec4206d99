"""What a failure costs a run: pytest shows a failure's source, asking ``inspect`` which
module the test's file is; the outcome plugin has told it for every test module it
keeps, so no failure in a test module (the canary that must fail, in a run where
nothing else fails) makes ``inspect`` look at every loaded module (``bugbout_hooks``)."""

from __future__ import annotations

from pathlib import Path

from bugbout.core.store.records import Outcome, RunStatus
from small_runs import run_small

TESTS = """\
import inspect


def test_a_fails():
    assert 1 + 1 == 3


def test_b_no_module_was_looked_for():
    assert not inspect._filesbymodname, len(inspect._filesbymodname)
"""


def test_a_failing_test_costs_no_look_at_every_loaded_module(tmp_path: Path) -> None:
    run = run_small(tmp_path, {"test_it.py": TESTS}, hostile=False)

    assert run.status == RunStatus.OK, run.tampering or run.detail
    assert run.outcomes == {
        "tests/test_it.py::test_a_fails": Outcome.FAILED,
        "tests/test_it.py::test_b_no_module_was_looked_for": Outcome.PASSED,
    }, run.failures
    assert run.failures["tests/test_it.py::test_a_fails"] == "assert (1 + 1) == 3"
