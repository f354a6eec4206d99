"""What signing the outcome lines costs a run: the plugin signs with the interpreter's
own SHA-256, so a run loads neither ``hashlib`` nor ``hmac`` (OpenSSL, 4 ms of CPU on
Python 3.13) when nothing else of it does, and bugbout verifies every line as before
(``bugbout_hooks``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.store.records import Outcome, RunStatus
from small_runs import run_small

PROJECT = ProjectSettings(
    source="pkg", tests="tests", env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
)  # pytest alone, none of the plugins installed beside it
TESTS = """\
import json
import os
import sys


def test_records_what_openssl_modules_are_loaded():
    with open(os.environ["LOADED_MARK"], "w") as mark:
        json.dump(sorted({"hashlib", "hmac"} & set(sys.modules)), mark)


def test_fails():
    assert 1 + 1 == 3
"""


def test_a_run_signs_its_lines_without_openssl(tmp_path: Path) -> None:
    """bugbout's run loads no ``hashlib`` nor ``hmac`` that pytest alone does not (pytest
    9.2 loads ``hashlib`` itself; 9.0 does not)."""
    mark = tmp_path / "loaded.json"
    project = PROJECT.model_copy(update={"env": {**PROJECT.env, "LOADED_MARK": str(mark)}})
    run = run_small(tmp_path, {"test_it.py": TESTS}, project=project)

    assert run.status == RunStatus.OK, run.tampering or run.detail
    assert run.outcomes == {
        "tests/test_it.py::test_records_what_openssl_modules_are_loaded": Outcome.PASSED,
        "tests/test_it.py::test_fails": Outcome.FAILED,
    }, run.failures
    with_bugbout = set(json.loads(mark.read_text()))
    mark.unlink()
    env = {**os.environ, **project.env, "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_it.py"],
        cwd=tmp_path / "tree", env=env, capture_output=True, check=False, timeout=120,
    )  # fmt: skip
    alone = set(json.loads(mark.read_text()))
    assert with_bugbout <= alone, f"bugbout's run loaded {sorted(with_bugbout - alone)}"
