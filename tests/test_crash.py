"""Tests that kill pytest: each is failed, with how it died, and the others still run.

Every crash here is real (a null pointer read through ``ctypes``, ``os.abort``, a
``SIGSEGV`` sent to itself, ``os._exit``), under the real test confinement.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from bugbout.core.contract.manager import Plugins, make_plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.pipeline import compute_oracles, mine_tasks
from bugbout.core.plumbing.environments.environment import Environment, EnvironmentRequest
from bugbout.core.plumbing.testruns.testrun import CRASH_LIMIT, run_tests
from bugbout.core.store.records import Outcome, RunStatus, Task, TaskIssue
from bugbout.core.store.store import Store
from bugbout.core.truth.oracle import judge_runs
from bugbout.testing import RepositoryBuilder
from history import calc_settings

PROJECT = ProjectSettings(source="pkg", tests="tests")

NATIVE = """\
import ctypes


def first(data):
    data = bytes(data)
    address = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value if data else 0
    return ctypes.string_at(address)[:1]
"""

TEST_NATIVE = """\
from calc.native import first


def test_first():
    assert first(b"ab") == b"a"


def test_first_of_empty():
    assert first(b"") == b""


def test_first_of_empty_bytearray():
    assert first(bytearray()) == b""


def test_first_is_bytes():
    assert isinstance(first(b"x"), bytes)
"""


@pytest.fixture
def environment(plugins: Plugins, tmp_path: Path) -> Environment:
    builder = plugins.create("environment", "interpreter")
    request = EnvironmentRequest(project=PROJECT, tree=tmp_path, home=tmp_path / "home")
    return builder.build(request)  # type: ignore[no-any-return]


def _write(tree: Path, name: str, source: str) -> None:
    path = tree / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))


def _task() -> Task:
    return Task(
        id="t", sha="s", parent="p", date="2024-01-01T00:00:00+00:00", title="Fix",
        issue=TaskIssue(number=1), source_files=["a.py"], test_files=["tests/test_a.py"],
    )  # fmt: skip


@pytest.mark.slow
def test_a_fail_to_pass_test_that_segfaults_before_the_fix_is_kept(tmp_path: Path) -> None:
    """The before run segfaults twice (reading address 0): both tests are failed there,
    the tests after them still run, and the task keeps its fail-to-pass tests."""
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial commit",
        {
            "pyproject.toml": '[project]\nname = "calc"\nrequires-python = ">=3.9"\n',
            "src/calc/__init__.py": "",
            "src/calc/native.py": NATIVE,
            "tests/test_native.py": TEST_NATIVE[: TEST_NATIVE.index("\n\ndef test_first_of_")],
        },
    )
    fix = repo.commit(
        "Fix the segfault on empty input (#4)",
        {
            "src/calc/native.py": NATIVE.replace(
                "    data = bytes(data)\n",
                "    data = bytes(data)\n    if not data:\n        return b''\n",
            ),
            "tests/test_native.py": TEST_NATIVE,
        },
    )
    settings = calc_settings(repo.path)
    store = Store(tmp_path / ".bugbout")
    plugins = make_plugins(entry_points=False)
    tasks = mine_tasks(settings, plugins, store)
    oracle = compute_oracles(settings, plugins, store, tasks).root[fix[:12]]

    module = "tests/test_native.py::"
    crashed = [f"{module}test_first_of_empty", f"{module}test_first_of_empty_bytearray"]
    assert oracle.status == "ok", oracle.reason
    assert oracle.fail_to_pass == crashed
    assert oracle.pass_to_pass == [f"{module}test_first", f"{module}test_first_is_bytes"]
    before = oracle.runs[0]
    assert before.status == RunStatus.OK
    assert before.crashes == dict.fromkeys(crashed, "crashed (signal 11)")
    assert {name: before.outcomes[name] for name in crashed} == dict.fromkeys(
        crashed, Outcome.FAILED
    )
    assert before.outcomes[f"{module}test_first_is_bytes"] == Outcome.PASSED
    assert oracle.runs[1].crashes == before.crashes  # the before tree's second run
    assert all(not run.crashes for run in oracle.runs[2:])


def test_each_test_that_kills_pytest_is_set_aside_exactly(
    environment: Environment, tmp_path: Path
) -> None:
    """An abort and an ``os._exit`` are failed with how pytest died; a test whose name
    starts with a crashed one's (``test_exit`` / ``test_exit_code``) still runs."""
    _write(
        tmp_path,
        "tests/test_a.py",
        """
        import os

        import pytest

        def test_exit():
            os._exit(3)

        def test_exit_code():
            pass

        @pytest.mark.parametrize("n", [1, 2])
        def test_abort(n):
            if n == 1:
                os.abort()

        def test_last():
            assert False
        """,
    )
    run = run_tests(environment, tmp_path, ["tests"], project=PROJECT, label="t", timeout=60)
    assert run.status == RunStatus.OK
    assert run.crashes == {
        "tests/test_a.py::test_exit": "crashed (exit code 3)",
        "tests/test_a.py::test_abort[1]": "crashed (signal 6)",
    }
    assert run.outcomes == {
        "tests/test_a.py::test_exit": Outcome.FAILED,
        "tests/test_a.py::test_exit_code": Outcome.PASSED,
        "tests/test_a.py::test_abort[1]": Outcome.FAILED,
        "tests/test_a.py::test_abort[2]": Outcome.PASSED,
        "tests/test_a.py::test_last": Outcome.FAILED,
    }
    assert run.failures == {
        "tests/test_a.py::test_exit": "crashed (exit code 3)",
        "tests/test_a.py::test_abort[1]": "crashed (signal 6)",
        "tests/test_a.py::test_last": "assert False",
    }


def test_a_lone_test_that_crashes_is_failed(environment: Environment, tmp_path: Path) -> None:
    """Once the only test is set aside nothing is left to run: the run is still ok."""
    _write(
        tmp_path,
        "tests/test_a.py",
        """
        import os, signal

        def test_only():
            os.kill(os.getpid(), signal.SIGSEGV)
        """,
    )
    run = run_tests(environment, tmp_path, ["tests"], project=PROJECT, label="t", timeout=60)
    assert (run.status, run.outcomes) == (
        RunStatus.OK,
        {"tests/test_a.py::test_only": Outcome.FAILED},
    )
    assert run.crashes == {"tests/test_a.py::test_only": "crashed (signal 11)"}


@pytest.mark.slow
def test_more_crashes_than_the_limit_crash_the_run(
    environment: Environment, tmp_path: Path
) -> None:
    _write(
        tmp_path,
        "tests/test_a.py",
        f"""
        import os, signal

        import pytest

        @pytest.mark.parametrize("n", range({CRASH_LIMIT + 2}))
        def test_crash(n):
            os.kill(os.getpid(), signal.SIGSEGV)
        """,
    )
    run = run_tests(environment, tmp_path, ["tests"], project=PROJECT, label="t", timeout=60)
    assert run.status == RunStatus.CRASHED
    assert len(run.crashes) == CRASH_LIMIT + 1
    oracle = judge_runs(_task(), [run, run.model_copy(update={"label": "after-1"})])
    assert oracle.status == "environment-error"
    assert f"{CRASH_LIMIT + 1} tests killed pytest" in (oracle.reason or "")


def test_a_crash_outside_any_test_names_the_signal(
    environment: Environment, tmp_path: Path
) -> None:
    """A segfault while collecting leaves no test to set aside: the reason names the
    signal, not the last line of Python's stack dump (the extension modules loaded)."""
    _write(tmp_path, "tests/test_a.py", "def test_a():\n    pass\n")
    _write(tmp_path, "tests/test_b.py", "import ctypes\n\nctypes.string_at(0)\n")
    run = run_tests(environment, tmp_path, ["tests"], project=PROJECT, label="before", timeout=60)
    assert run.status == RunStatus.CRASHED
    assert run.crashes == {}
    oracle = judge_runs(_task(), [run, run.model_copy(update={"label": "after-1"})])
    assert oracle.reason == (
        "the before run crashed (signal 11) while no test was running (see its detail)"
    )
    assert 'tests/test_b.py", line 3' in run.detail
