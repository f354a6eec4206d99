"""A project that names its tests otherwise (``python_files``, ``python_functions``,
``python_classes``) has its canaries and twins named so that its pytest collects them: its
runs are honest, not tampered, on today's pytest and an old one, and a cheat is still
caught there. The names are read from the configuration pytest would read, never through
a link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bugbout.core.plumbing.project.pytest_options import collected_names
from bugbout.core.plumbing.tampering.naming import Naming, naming
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.store.records import Outcome, RunStatus
from old_pytests import old_pytest
from test_pytest_eras import HOST, PROJECT, environment, write

CONFIGURATION = """
    [pytest]
    python_files = checks_*.py
    python_functions = check_*
    python_classes = *Checks
"""
CHECKS = """
    import pkg


    def check_fixed():
        assert pkg.VALUE == 2


    def helper_kept():
        assert pkg.VALUE == 1


    class ValueChecks:
        def check_kept(self):
            assert pkg.VALUE == 1

        def check_again(self):
            assert pkg.VALUE + 1 == 2
"""
OWN = {
    "tests/checks_value.py::check_fixed": Outcome.FAILED,
    "tests/checks_value.py::ValueChecks::check_kept": Outcome.PASSED,
    "tests/checks_value.py::ValueChecks::check_again": Outcome.PASSED,
}
CHEAT = """
    import pytest


    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        outcome = yield
        report = outcome.get_result()
        report.outcome, report.longrepr = "passed", None
"""


def _tree(root: Path, conftest: str = "", where: str = "pytest.ini") -> Path:
    files = {where: CONFIGURATION, "pkg/__init__.py": "VALUE = 1\n"}
    files |= {"tests/checks_value.py": CHECKS, "tests/conftest.py": conftest}
    return write(root, files)


@pytest.mark.parametrize("version", ["today", "3.0.7"])
@pytest.mark.parametrize("target", ["tests", "tests/checks_value.py"])
@pytest.mark.parametrize("hostile", [False, True])
def test_a_project_s_own_test_names_get_honest_runs(
    version: str, target: str, hostile: bool, tmp_path: Path
) -> None:
    python = HOST if version == "today" else str(old_pytest(version))
    tree = _tree(tmp_path / "tree")
    run = run_tests(
        environment(python, tree), tree, [target], project=PROJECT, label="t", timeout=120,
        hostile=hostile,
    )  # fmt: skip
    assert run.status == RunStatus.OK, (run.tampering, run.detail)
    assert run.outcomes == OWN
    assert sorted(path.name for path in (tree / "tests").iterdir() if path.suffix == ".py") == [
        "checks_value.py",
        "conftest.py",
    ]  # the canaries were collected, and removed


def test_the_names_are_read_where_pytest_finds_its_configuration(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "tree", where="tests/pytest.ini")  # found before the root's
    (tree / "pyproject.toml").write_text('[tool.pytest.ini_options]\npython_files = ["x_*.py"]\n')
    run = run_tests(
        environment(HOST, tree), tree, ["tests"], project=PROJECT, label="t", timeout=120,
        hostile=True,
    )  # fmt: skip
    assert run.status == RunStatus.OK, (run.tampering, run.detail)
    assert run.outcomes == OWN


def test_a_cheat_is_still_caught_under_the_project_s_names(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "tree", CHEAT)
    run = run_tests(
        environment(HOST, tree), tree, ["tests"], project=PROJECT, label="t", timeout=120,
        hostile=True,
    )  # fmt: skip
    assert run.status == RunStatus.TAMPERED
    assert any("must fail but passed" in why for why in run.tampering), run.tampering


def test_names_are_made_to_match_the_project_s_patterns() -> None:
    default = Naming()
    assert (default.module("abc"), default.function("abc"), default.test_class("abc")) == (
        "test_abc.py",
        "test_abc",
        "TestAbc",
    )
    own = naming(["checks_*.py", "*_check.py"], ["check", "*_verified"], ["*Checks"])
    assert (own.module("abc"), own.function("abc"), own.test_class("abc")) == (
        "checks_abc.py",
        "check_abc",
        "AbcChecks",
    )
    assert own.is_function("check_abc") and own.is_function("abc_verified")
    assert not own.is_function("test_abc") and not own.is_class("TestAbc")
    suffixed = naming(None, ["*_verified"], None)
    assert suffixed.function("abc") == "abc_verified"
    assert naming(None, ["[ab]*"], None).function("abc") == "test_abc"  # none made: as before


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pytest.ini", "[pytest]\npython_functions = check_* verify_*\n"),
        (
            "pyproject.toml",
            '[tool.pytest.ini_options]\npython_functions = ["check_*", "verify_*"]\n',
        ),
        ("tox.ini", "[pytest]\npython_functions = check_* verify_*\n"),
        ("setup.cfg", "[tool:pytest]\npython_functions = check_* verify_*\n"),
    ],
)
def test_the_names_are_read_where_pytest_reads_them(name: str, text: str, tmp_path: Path) -> None:
    (tmp_path / name).write_text(text)
    assert collected_names(tmp_path.joinpath, ["tests"]) == [None, ["check_*", "verify_*"], None]
    (tmp_path / name).unlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text(text)
    os.symlink(elsewhere, tmp_path / name)  # a link an agent made: not followed
    assert collected_names(tmp_path.joinpath, ["tests"]) == [None, None, None]


FUNCTIONS = "[pytest]\npython_functions = check_*\n"
TOOL = '[tool.pytest.ini_options]\npython_functions = ["check_*"]\n'
CFG = "[tool:pytest]\npython_functions = c_*\n"
PROJECT_ONLY = "[project]\nname = 'x'\n"
NATIVE = '[pytest]\npython_functions = ["e_*"]\n'


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # the folder of the targets first, then the ones above it
        ({"tests/tox.ini": "[pytest]\npython_classes = Check\n", "pytest.ini": FUNCTIONS}, None),
        # a pytest.ini is pytest's configuration even without a [pytest] section
        ({"pytest.ini": "[other]\n", "pyproject.toml": TOOL}, None),
        # a tox.ini or a setup.cfg without one is not, nor a pyproject.toml without its table
        ({"tox.ini": "[other]\n", "setup.cfg": CFG}, ["c_*"]),
        (
            {
                "pyproject.toml": "[project]\nname = 'x'\n",
                "tox.ini": "[pytest]\npython_functions = d\n",
            },
            ["d"],
        ),
        # pytest 9's own files, and the native table in pyproject.toml
        (
            {"pytest.toml": '[pytest]\npython_functions = ["e_*"]\n', "pytest.ini": FUNCTIONS},
            ["e_*"],
        ),
        ({"pyproject.toml": '[tool.pytest]\npython_functions = ["f_*"]\n'}, ["f_*"]),
    ],
)
def test_the_first_configuration_pytest_takes_names_the_tests(
    files: dict[str, str], expected: list[str] | None, tmp_path: Path
) -> None:
    (tmp_path / "tests").mkdir()
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert collected_names(tmp_path.joinpath, ["tests/test_a.py", "tests"])[1] == expected
