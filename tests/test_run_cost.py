"""What a test run costs inside pytest, with every check kept: the module pytest loads
with ``-p`` (whose source it parses and rewrites in every run) holds no code, the hooks
are imported as plain modules, and the impostor probe is imported only by a run that
probes."""

from __future__ import annotations

from pathlib import Path

from bugbout.core.store.records import Outcome, RunStatus
from small_runs import run_small

LOADED = """\
import sys


def test_the_probe_is_not_imported():
    assert "bugbout_impostors" not in sys.modules


def test_the_hooks_are_not_rewritten():
    loader = type(sys.modules["bugbout_hooks"].__loader__).__name__
    assert loader != "AssertionRewritingHook", loader


def test_the_loaded_plugin_holds_no_code():
    import bugbout_outcomes

    assert bugbout_outcomes.pytest_runtest_logreport.__module__ == "bugbout_hooks"
"""


def test_a_run_imports_what_it_uses_and_pytest_rewrites_no_plugin_code(tmp_path: Path) -> None:
    run = run_small(tmp_path, {"test_loaded.py": LOADED})

    assert run.status == RunStatus.OK, run.tampering or run.detail
    assert run.outcomes == {
        "tests/test_loaded.py::test_the_probe_is_not_imported": Outcome.PASSED,
        "tests/test_loaded.py::test_the_hooks_are_not_rewritten": Outcome.PASSED,
        "tests/test_loaded.py::test_the_loaded_plugin_holds_no_code": Outcome.PASSED,
    }, run.failures
