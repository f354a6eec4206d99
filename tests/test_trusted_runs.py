"""A run of the maintainers' own code (``hostile=False``: ground truth, injected bugs)
leaves the test files it targets as they are, while its canary modules still run beside
them; a run of a tree an agent may have touched gets twins inside its test files."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import Environment, EnvironmentRequest
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.store.records import Outcome, RunStatus

PROJECT = ProjectSettings(source="pkg", tests="tests")
SELF_READING = """from pathlib import Path

ORIGINAL = Path(__file__).read_bytes()


def test_one():
    assert 1 + 1 == 2


def test_two():
    assert "a" * 2 == "aa"


def test_the_file_is_as_written():
    assert ORIGINAL.count(b"\\ndef ") == 3 and b"\\nclass " not in ORIGINAL
"""


@pytest.fixture
def environment(plugins: Plugins, tmp_path: Path) -> Environment:
    builder = plugins.create("environment", "interpreter")
    request = EnvironmentRequest(project=PROJECT, tree=tmp_path, home=tmp_path / "home")
    return builder.build(request)  # type: ignore[no-any-return]


@pytest.mark.parametrize("hostile", [False, True])
def test_only_a_hostile_run_writes_twins_into_its_test_files(
    environment: Environment, tmp_path: Path, hostile: bool
) -> None:
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "test_self.py").write_text(SELF_READING)
    run = run_tests(
        environment, tree, ["tests/test_self.py"], project=PROJECT, label="t", timeout=60,
        hostile=hostile,
    )  # fmt: skip
    assert run.status == RunStatus.OK, run.detail
    assert set(run.outcomes) == {
        "tests/test_self.py::test_one",
        "tests/test_self.py::test_two",
        "tests/test_self.py::test_the_file_is_as_written",
    }
    seen = run.outcomes["tests/test_self.py::test_the_file_is_as_written"]
    assert seen == (Outcome.FAILED if hostile else Outcome.PASSED)
    assert (tree / "tests" / "test_self.py").read_text() == SELF_READING
    assert sorted(p.name for p in (tree / "tests").iterdir()) == ["test_self.py"]


def test_a_trusted_run_still_has_its_canary_modules(
    environment: Environment, tmp_path: Path
) -> None:
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "test_self.py").write_text(SELF_READING)
    (tree / "tests" / "conftest.py").write_text(
        "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n"
        "    report = outcome.get_result()\n"
        "    if report.failed:\n"
        "        report.outcome = 'passed'\n"
    )
    run = run_tests(
        environment, tree, ["tests/test_self.py"], project=PROJECT, label="t", timeout=60,
        hostile=False,
    )  # fmt: skip
    assert run.status == RunStatus.TAMPERED
    assert any("must fail but passed" in reason for reason in run.tampering), run.tampering
