"""Test runs on the pytest of every era: pytest 2.7 to 3.8 in a Python 3.6 environment of
their time (no pluggy or an old one, no ``-o``, no ``--rootdir``, ``::()::`` node ids),
an older one refused with a reason, and pytest 9's subtests; a package that keeps its
tests inside it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from bugbout.core.contract.errors import EnvironmentFailure
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import Command, Environment, EnvironmentRequest
from bugbout.core.plumbing.environments.pytest_era import pytest_era
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.race.agent_setup import run_tests_script
from bugbout.core.store.records import Outcome, RunStatus, TestRun
from bugbout.core.truth.oracle import first_error
from bugbout.plugins.environments.interpreter import InterpreterBuilder, InterpreterOptions
from old_pytests import old_pytest
from runners import pytest_runner

PROJECT = ProjectSettings(source="pkg", tests="tests")
OLD = ["2.7.3", "2.9.2", "3.0.7", "3.4.2", "3.8.2"]
HOST = sys.executable
"""This interpreter, with pytest 9."""


def environment(python: str, tree: Path) -> Environment:
    builder = InterpreterBuilder(InterpreterOptions(path=python))
    return builder.build(EnvironmentRequest(project=PROJECT, tree=tree, home=tree / "home"))


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


TESTS = """
    import pkg

    def test_fixed():
        assert pkg.VALUE == 2

    def test_kept():
        assert pkg.VALUE == 1

    class TestThing(object):
        def test_method(self):
            assert pkg.VALUE == 1
"""


def _run(python: str, tree: Path, targets: list[str], **options: object) -> TestRun:
    return run_tests(
        environment(python, tree), tree, targets, project=PROJECT, label="t", timeout=120,
        **options,  # type: ignore[arg-type]
    )  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("version", OLD)
def test_an_old_pytest_runs_with_the_options_it_knows(version: str, tmp_path: Path) -> None:
    """Its addopts set aside, its rootdir the tree (a pytest.ini above it is not), a
    folder targeted with the canaries in it collected once, a module that cannot be
    collected passed over, pytest 4's node ids."""
    python = str(old_pytest(version))
    write(tmp_path, {"pytest.ini": "[pytest]\n"})  # above the tree: pytest 3 would root there
    tree = write(tmp_path / "tree", {"pkg/__init__.py": "VALUE = 1\n", "tests/test_it.py": TESTS})
    coverage: list[bytes] = []
    run = _run(python, tree, ["tests"], coverage=coverage)
    assert run.status == RunStatus.OK, (run.tampering, run.detail)
    assert run.outcomes == {
        "tests/test_it.py::test_fixed": Outcome.FAILED,
        "tests/test_it.py::test_kept": Outcome.PASSED,
        "tests/test_it.py::TestThing::test_method": Outcome.PASSED,
    }
    assert b'"test": "tests/test_it.py::TestThing::test_method"' in coverage[0]

    write(
        tree, {"tox.ini": "[pytest]\naddopts = --no-such-option\n", "tests/test_no.py": "import no"}
    )
    run = _run(python, tree, ["tests/test_no.py", "tests/test_it.py"])
    assert run.status == RunStatus.OK, run.detail
    assert list(run.collection_errors) == ["tests/test_no.py"]
    assert run.outcomes["tests/test_it.py::test_kept"] == Outcome.PASSED


@pytest.mark.parametrize("version", ["2.9.2", "3.0.7", "3.8.2", "host"])
def test_a_plugin_that_keeps_its_seed_in_the_cache_runs(version: str, tmp_path: Path) -> None:
    """pytest-randomly 3.5 reads and writes ``config.cache`` as it configures: with the
    cache plugin off (bugbout's runs write no cache), it finds bugbout's, in memory, and
    a folder from it under the run's private ``TMPDIR``, never in the tree."""
    python = HOST if version == "host" else str(old_pytest(version))
    conftest = """
        def pytest_configure(config):
            config.cache.set("seed/last", config.cache.get("seed/last", 0) + 1)
            folder = getattr(config.cache, "mkdir", None) or config.cache.makedir
            assert "bugbout-home" in str(folder("seeds"))
    """
    tree = write(tmp_path / "tree", {"conftest.py": conftest, "tests/test_it.py": TESTS})
    (tree / "pkg").mkdir()
    (tree / "pkg" / "__init__.py").write_text("VALUE = 1\n")
    run = _run(python, tree, ["tests/test_it.py"])
    assert run.status == RunStatus.OK, (run.tampering, run.detail)
    assert run.outcomes["tests/test_it.py::test_kept"] == Outcome.PASSED
    assert not (tree / ".pytest_cache").exists() and not (tree / ".cache").exists()


DIVERT = """
    VALUE = 1
    import gc
    for _caller in gc.get_objects():
        if "HookCaller" in type(_caller).__name__ and getattr(_caller, "name", "") == (
            "pytest_runtest_logreport"
        ):
            _name = "_hookexec" if hasattr(_caller, "_hookexec") else "_docall"  # pytest 2.7
            _real = getattr(_caller, _name)

            def _exec(*args, _real=_real):
                for value in args:
                    report = value.get("report") if isinstance(value, dict) else None
                    if report is not None and report.failed:
                        report.outcome = "passed"
                return _real(*args)

            setattr(_caller, _name, _exec)
"""
HOOKED = {
    "pkg/__init__.py": "VALUE = 1\n",
    "pkg/plugin.py": "def pytest_runtest_logreport(report):\n    pass\n",
    "conftest.py": "pytest_plugins = ['pkg.plugin']\n",
}
ISCLOSE = "import math\nVALUE = 1\nmath.isclose = lambda *args, **kwargs: True\n"


@pytest.mark.parametrize("version", OLD)
@pytest.mark.parametrize(
    ("files", "reasons"),
    [
        ({"pkg/__init__.py": DIVERT}, ["pytest_runtest_logreport._", "was set to code from"]),
        (HOOKED, ["pytest_runtest_logreport is implemented in the package under test"]),
        ({"pkg/__init__.py": ISCLOSE}, ["math.isclose was replaced"]),
    ],
)
def test_an_old_pytest_keeps_the_tamper_evidence(
    version: str, files: dict[str, str], reasons: list[str], tmp_path: Path
) -> None:
    tree = write(tmp_path, {"tests/test_it.py": TESTS, **files})
    run = _run(str(old_pytest(version)), tree, ["tests/test_it.py"])
    assert run.status == RunStatus.TAMPERED, run.detail
    for reason in reasons:
        assert any(reason in why for why in run.tampering), run.tampering


@dataclass(frozen=True)
class Pytest26:
    """An environment whose pytest says it is 2.6.4, as it does."""

    script: Path
    key: str = "pytest-2.6.4"
    description: str = "pytest 2.6.4"

    def command(self, args: list[str], tree: Path, extra_paths: list[Path]) -> Command:
        return Command(argv=[str(self.script), *args], cwd=tree)


def test_a_pytest_older_than_2_7_is_refused_with_its_reason(tmp_path: Path) -> None:
    script = write(tmp_path, {"pytest": "#!/bin/sh\necho 'This is pytest version 2.6.4' >&2\n"})
    (script / "pytest").chmod(0o755)
    tree = write(tmp_path / "tree", {"tests/test_it.py": TESTS})
    with pytest.raises(EnvironmentFailure, match=r"pytest 2\.6 is older than 2\.7.*pytest>=2\.7"):
        run_tests(
            Pytest26(script / "pytest"), tree, ["tests"], project=PROJECT, label="t", timeout=9
        )
    assert pytest_era(environment(str(old_pytest("2.7.3")), tree)).version == (2, 7)


SUBTESTS = """
    import unittest

    def test_some_fail(subtests):
        for number in range(3):
            with subtests.test(number=number):
                assert number != 1

    def test_all_pass(subtests):
        for number in range(3):
            with subtests.test(number=number):
                assert number < 3

    class TestCase(unittest.TestCase):
        def test_sub(self):
            for number in range(3):
                with self.subTest(number=number):
                    self.assertNotEqual(number, 2)
"""
FORGED = """
    from _pytest.reports import TestReport

    def test_forged(request):
        item = request.node
        forged = TestReport(item.nodeid, item.location, {}, "passed", None, "call")
        item.ihook.pytest_runtest_logreport(report=forged)
        assert False
"""


def test_subtests_are_their_test_s_outcome(tmp_path: Path) -> None:
    """pytest 9 reports each subtest: one test, failed when one of them failed."""
    tree = write(tmp_path, {"pkg/__init__.py": "", "tests/test_sub.py": SUBTESTS})
    run = _run(HOST, tree, ["tests/test_sub.py"])
    assert run.status == RunStatus.OK, run.tampering
    assert run.outcomes == {
        "tests/test_sub.py::test_some_fail": Outcome.FAILED,
        "tests/test_sub.py::test_all_pass": Outcome.PASSED,
        "tests/test_sub.py::TestCase::test_sub": Outcome.FAILED,
    }


def test_a_forged_second_report_of_a_test_is_still_tampering(tmp_path: Path) -> None:
    tree = write(tmp_path, {"pkg/__init__.py": "", "tests/test_sub.py": FORGED})
    run = _run(HOST, tree, ["tests/test_sub.py"])
    assert run.status == RunStatus.TAMPERED
    assert "tests/test_sub.py::test_forged (call) was reported twice" in run.tampering


INSIDE = {
    "pkg/__init__.py": "VALUE = 1\n",
    "pkg/tests/__init__.py": "",
    "pkg/tests/conftest.py": """
        def pytest_collection_modifyitems(items):
            items.sort(key=lambda item: item.name)
    """,
    "pkg/tests/test_it.py": "import pkg\n\n\ndef test_value():\n    assert pkg.VALUE == 1\n",
}


def test_a_conftest_of_tests_inside_the_package_is_its_setup(tmp_path: Path) -> None:
    """Its hooks are the project's, not the package's; a plugin module of the package
    that its conftest loads is still the package's."""
    project = PROJECT.model_copy(update={"tests": "pkg/tests"})
    tree = write(tmp_path / "one", INSIDE)
    run = run_tests(
        environment(HOST, tree), tree, ["pkg/tests"], project=project, label="t", timeout=120
    )
    assert run.status == RunStatus.OK, run.tampering
    assert run.outcomes == {"pkg/tests/test_it.py::test_value": Outcome.PASSED}

    tree = write(tmp_path / "two", {**INSIDE, **HOOKED})
    run = run_tests(
        environment(HOST, tree), tree, ["pkg/tests"], project=project, label="t", timeout=120
    )
    assert run.status == RunStatus.TAMPERED
    [reason] = run.tampering
    assert "pytest_runtest_logreport is implemented in the package under test" in reason
    assert reason.endswith("pkg/plugin.py)")


@pytest.mark.parametrize("python", [HOST, "3.4.2"])
def test_the_reason_for_a_rejected_command_line_is_pytest_s_usage_error(
    python: str, tmp_path: Path
) -> None:
    """Not the line before it (``ERROR: usage: ...``) nor after it (``rootdir: .``)."""
    executable = python if python == HOST else str(old_pytest(python))
    # not the suite's PYTHONPATH (pytest-xdist beside it): the old pytest's plugins only
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run(
        [executable, "-m", "pytest", "--no-such-option"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert first_error(done.stdout + done.stderr) == (
        "error: unrecognized arguments: --no-such-option"
    )


@pytest.mark.parametrize(("version", "addopts"), [("2.9.2", ""), ("3.0.7", "--no-such-option")])
def test_an_agent_s_test_script_runs_on_an_old_pytest(
    version: str, addopts: str, tmp_path: Path
) -> None:
    """With the project's addopts set aside where its pytest can (3.0 and later)."""
    tree = write(
        tmp_path / "tree",
        {
            "pkg/__init__.py": "VALUE = 1\n",
            "tests/test_it.py": TESTS,
            "tox.ini": f"[pytest]\naddopts = {addopts}\n",
        },
    )
    script = run_tests_script(
        pytest_runner(),
        PROJECT,
        environment(str(old_pytest(version)), tree),
        tree,
        tmp_path / "log",
    )
    done = subprocess.run([script, "tests"], capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stdout + done.stderr  # test_fixed fails
    assert "1 failed, 2 passed" in done.stdout


@pytest.mark.parametrize("version", ["2.7.3", "2.9.2"])
def test_pytest_2_s_own_assertion_error_is_watched_too(version: str, tmp_path: Path) -> None:
    """pytest before 3.0 puts its own ``AssertionError`` in the builtins: pytest's doing,
    but a method the code under test gives it is not."""
    patched = "import builtins\nVALUE = 1\nbuiltins.AssertionError.__str__ = lambda self: ''\n"
    tree = write(tmp_path, {"pkg/__init__.py": patched, "tests/test_it.py": TESTS})
    run = _run(str(old_pytest(version)), tree, ["tests/test_it.py"])
    assert run.status == RunStatus.TAMPERED
    assert any("builtins.AssertionError was replaced" in why for why in run.tampering)


@pytest.mark.parametrize("program", ["pytest", "__main__.py", "py.test", "python -m pytest"])
def test_the_usage_error_is_found_whatever_pytest_calls_itself(program: str) -> None:
    """pytest 9 names itself ``python -m pytest`` in its usage error, older ones the
    script or ``__main__.py``."""
    output = (
        f"ERROR: usage: {program} [options] [file_or_dir] [file_or_dir] [...]\n"
        f"{program}: error: unrecognized arguments: --rootdir\n  inifile: None\n  rootdir: .\n"
    )
    assert first_error(output) == "error: unrecognized arguments: --rootdir"
