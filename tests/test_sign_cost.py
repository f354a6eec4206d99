"""What signing the outcome lines costs a run: the plugin signs with the interpreter's
own SHA-256, so a run loads neither ``hashlib`` nor ``hmac`` (OpenSSL, 4 ms of CPU on
Python 3.13) when nothing else of it does, and bugbout verifies every line as before
(``bugbout_hooks``)."""

from __future__ import annotations

from pathlib import Path

from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.store.records import Outcome, RunStatus
from small_runs import run_small

PROJECT = ProjectSettings(
    source="pkg", tests="tests", env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
)  # pytest alone, none of the plugins installed beside it
TESTS = """\
import sys


def test_nothing_loaded_openssl_for_bugbout():
    assert not {"hashlib", "hmac"} & set(sys.modules), sorted(sys.modules)


def test_fails():
    assert 1 + 1 == 3
"""


def test_a_run_signs_its_lines_without_openssl(tmp_path: Path) -> None:
    run = run_small(tmp_path, {"test_it.py": TESTS}, project=PROJECT)

    assert run.status == RunStatus.OK, run.tampering or run.detail
    assert run.outcomes == {
        "tests/test_it.py::test_nothing_loaded_openssl_for_bugbout": Outcome.PASSED,
        "tests/test_it.py::test_fails": Outcome.FAILED,
    }, run.failures
