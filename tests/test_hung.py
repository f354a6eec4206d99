"""Tests that hang: each is stopped at ``project.test-timeout``, failed as ``hung``, and
the others still run; a bug that hangs its test on the unfixed code is fail-to-pass."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from bugbout.core.contract.manager import Plugins, make_plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.pipeline import compute_oracles, mine_tasks
from bugbout.core.plumbing.environments.environment import Environment, EnvironmentRequest
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.store.records import Outcome, RunStatus
from bugbout.core.store.store import Store
from bugbout.testing import RepositoryBuilder
from history import calc_settings

PROJECT = ProjectSettings(source="pkg", tests="tests", test_timeout=2)

LOOP = """\
def find(items, wanted):
    index = 0
    while index < len(items):
        if items[index] == wanted:
            return index
    return -1
"""

TESTS = """\
from calc.search import find


def test_first():
    assert find([3], 3) == 0


def test_missing():
    assert find([1, 2], 3) == -1
"""


@pytest.fixture
def environment(plugins: Plugins, tmp_path: Path) -> Environment:
    builder = plugins.create("environment", "interpreter")
    request = EnvironmentRequest(project=PROJECT, tree=tmp_path, home=tmp_path / "home")
    return builder.build(request)  # type: ignore[no-any-return]


def test_a_test_that_hangs_is_failed_and_the_rest_still_run(
    environment: Environment, tmp_path: Path
) -> None:
    tests = tmp_path / "tests" / "test_a.py"
    tests.parent.mkdir()
    tests.write_text(
        textwrap.dedent(
            """
            import time

            def test_before():
                pass

            def test_hangs():
                while True:
                    time.sleep(0.05)

            def test_after():
                pass
            """
        )
    )
    run = run_tests(environment, tmp_path, ["tests"], project=PROJECT, label="t", timeout=120)
    module = "tests/test_a.py::"
    assert run.status == RunStatus.OK
    assert run.outcomes == {
        f"{module}test_before": Outcome.PASSED,
        f"{module}test_hangs": Outcome.FAILED,
        f"{module}test_after": Outcome.PASSED,
    }
    assert run.crashes == {f"{module}test_hangs": "hung (still running after 2 s)"}
    assert run.duration < 60  # stopped at the test's limit, not at the run's


@pytest.mark.slow
def test_a_bug_that_hangs_its_test_is_fail_to_pass(tmp_path: Path) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial commit",
        {
            "pyproject.toml": '[project]\nname = "calc"\nrequires-python = ">=3.9"\n',
            "src/calc/__init__.py": "",
            "src/calc/search.py": LOOP,
            "tests/test_search.py": TESTS[: TESTS.index("\n\ndef test_missing")],
        },
    )
    fix = repo.commit(
        "Fix the endless search for a missing item (#7)",
        {
            "src/calc/search.py": LOOP.replace(
                "            return index\n", "            return index\n        index += 1\n"
            ),
            "tests/test_search.py": TESTS,
        },
    )
    settings = calc_settings(repo.path)
    settings = settings.model_copy(
        update={"project": settings.project.model_copy(update={"test_timeout": 2})}
    )
    store = Store(tmp_path / ".bugbout")
    plugins = make_plugins(entry_points=False)
    oracle = compute_oracles(settings, plugins, store, mine_tasks(settings, plugins, store))
    found = oracle.root[fix[:12]]
    assert found.status == "ok", found.reason
    assert found.fail_to_pass == ["tests/test_search.py::test_missing"]
    assert found.runs[0].crashes == {
        "tests/test_search.py::test_missing": "hung (still running after 2 s)"
    }
