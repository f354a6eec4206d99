"""A test that skips while it runs (``unittest.skip`` on a method or a class,
``self.skipTest``, ``pytest.skip`` in its body) is ``skipped``, not ``failed``, on the
pytest of every era: pytest reports these skips in the call phase (jsonschema 2018's
``TestLegacyTypeCheckCreation``, under pytest 3.7, was recorded failed)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import EnvironmentRequest
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.store.records import Outcome, RunStatus
from bugbout.plugins.environments.interpreter import InterpreterBuilder, InterpreterOptions
from old_pytests import old_pytest

PROJECT = ProjectSettings(source="pkg", tests="tests")

SKIPPING = """
    import unittest

    import pytest

    import pkg


    class TestCase(unittest.TestCase):
        @unittest.skip("decorated")
        def test_decorated(self):
            self.fail("ran")

        def test_skip_test(self):
            self.skipTest("in the body")

        def test_fails(self):
            self.assertEqual(pkg.VALUE, 2)


    @unittest.skip("the whole class")
    class TestSkippedClass(unittest.TestCase):
        def test_method(self):
            self.fail("ran")


    def test_pytest_skip():
        pytest.skip("in the body")


    def test_passes():
        assert pkg.VALUE == 1
"""
EXPECTED = {
    "tests/test_skips.py::TestCase::test_decorated": Outcome.SKIPPED,
    "tests/test_skips.py::TestCase::test_skip_test": Outcome.SKIPPED,
    "tests/test_skips.py::TestCase::test_fails": Outcome.FAILED,
    "tests/test_skips.py::TestSkippedClass::test_method": Outcome.SKIPPED,
    "tests/test_skips.py::test_pytest_skip": Outcome.SKIPPED,
    "tests/test_skips.py::test_passes": Outcome.PASSED,
}


def _outcomes(python: str, tree: Path) -> dict[str, Outcome]:
    """The outcomes of ``SKIPPING`` run by the pytest of ``python``."""
    (tree / "pkg").mkdir()
    (tree / "pkg/__init__.py").write_text("VALUE = 1\n")
    (tree / "tests").mkdir()
    (tree / "tests/test_skips.py").write_text(textwrap.dedent(SKIPPING))
    builder = InterpreterBuilder(InterpreterOptions(path=python))
    environment = builder.build(EnvironmentRequest(project=PROJECT, tree=tree, home=tree / "home"))
    run = run_tests(
        environment, tree, ["tests/test_skips.py"], project=PROJECT, label="t", timeout=120
    )
    assert run.status == RunStatus.OK, run.detail
    return dict(run.outcomes)


def test_skips_while_running_are_skipped(tmp_path: Path) -> None:
    assert _outcomes(sys.executable, tmp_path) == EXPECTED


@pytest.mark.slow
@pytest.mark.parametrize("version", ["2.9.2", "3.0.7", "3.4.2", "3.8.2", "4.6.11", "5.4.3"])
def test_skips_while_running_are_skipped_on_an_old_pytest(version: str, tmp_path: Path) -> None:
    assert _outcomes(str(old_pytest(version)), tmp_path) == EXPECTED
