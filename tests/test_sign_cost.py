"""What signing the outcome lines costs a run: the plugin signs with the interpreter's
own SHA-256, so a run loads neither ``hashlib`` nor ``hmac`` (OpenSSL, 4 ms of CPU on
Python 3.13) when nothing else of it does, and bugbout verifies every line as before
(``bugbout_hooks``)."""

from __future__ import annotations

from pathlib import Path

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import Environment, EnvironmentRequest
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.store.records import Outcome, RunStatus

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


def _environment(tree: Path, home: Path) -> Environment:
    return (
        make_plugins(entry_points=False)
        .create("environment", "interpreter")
        .build(EnvironmentRequest(project=PROJECT, tree=tree, home=home))
    )


def test_a_run_signs_its_lines_without_openssl(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "tests").mkdir()
    (tree / "tests" / "test_it.py").write_text(TESTS)

    run = run_tests(
        _environment(tree, tmp_path / "home"), tree, ["tests"], project=PROJECT, label="r",
        timeout=120,
    )  # fmt: skip

    assert run.status == RunStatus.OK, run.tampering or run.detail
    assert run.outcomes == {
        "tests/test_it.py::test_nothing_loaded_openssl_for_bugbout": Outcome.PASSED,
        "tests/test_it.py::test_fails": Outcome.FAILED,
    }, run.failures
