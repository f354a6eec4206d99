"""Fixes older than Python 3.7 are tested on Python 3.6 when the machine has it, chosen by
the era rule; without it, the oldest Python here stands in and a failed task says what it
lacks. Real git, real uv environments (PyPI as of the fix), real pytest of the era."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.contract.errors import EnvironmentFailure
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import EnvironmentRequest
from bugbout.core.plumbing.environments.interpreters import (
    available_interpreters,
    era_python,
    stand_in,
)
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.store.records import Oracle, Outcome, RunStatus
from bugbout.plugins.environments.interpreter import InterpreterBuilder, InterpreterOptions
from bugbout.plugins.environments.uv import UvBuilder, UvOptions
from bugbout.testing import RepositoryBuilder
from history import dated_commit, offline_ground_truth
from local_index import serve
from old_pytests import old_pytest
from python_mirror import hide

DAY = "2015-03-01T12:00:00+00:00"
LACKS = (
    "needs Python <= 3.6 (the fix predates Python 3.7, released 2018-06-27), tested on 3.7; "
    "install one, e.g. `pyenv install 3.6`"
)
TOKENS = """\
def tokens(items):
    for item in items:
        if item is None:
            raise StopIteration
        yield item{fixed}
"""
TEST = """\
from calc import tokens


def test_empty():
    assert list(tokens([])) == []


def test_doubles_until_none():
    assert list(tokens([1, None, 2])) == [2]
"""


@pytest.mark.parametrize(
    ("declared", "date", "local", "era"),
    [
        (None, "2015-03-01", ["3.6", "3.7", "3.9"], "3.6"),  # older than 3.6: the oldest
        (None, "2017-09-01", ["3.6", "3.7", "3.9"], "3.6"),  # 3.6 was the newest then
        (None, "2018-09-01", ["3.6", "3.7", "3.9"], "3.7"),  # 3.7 was out
        (">=3.7", "2015-03-01", ["3.6", "3.7"], "3.7"),  # the project's declaration wins
        (">=2.6, !=3.0.*, !=3.1.*", "2016-05-01", ["3.6", "3.7"], "3.6"),
    ],
)
def test_the_era_rule_reaches_python_36(
    declared: str | None, date: str, local: list[str], era: str
) -> None:
    assert era_python(declared, date, local, None) == era


def test_a_missing_36_has_the_oldest_python_here_stand_in() -> None:
    assert stand_in(None, "3.6", ["3.9", "3.7"]) == ("3.7", LACKS)
    assert stand_in(">=3.8", "3.6", ["3.9", "3.7"]) == (
        "3.9",
        LACKS.replace("tested on 3.7", "tested on 3.9"),
    )
    assert stand_in(None, "3.8", ["3.9"]) is None  # uv provides 3.8: no stand-in
    assert stand_in(None, "3.6", []) is None


def test_a_missing_37_has_a_stand_in_too() -> None:
    """uv downloads no Python older than 3.8: a 2019 fix on a machine without 3.7 is
    tested on the oldest Python here, never left to a download that cannot happen."""
    assert stand_in(None, "3.7", ["3.9", "3.11"]) == (
        "3.9",
        "needs Python <= 3.7 (the fix predates Python 3.8, released 2019-10-14), tested on "
        "3.9; install one, e.g. `pyenv install 3.7`",
    )


def test_without_python_36_or_37_a_2019_fix_is_tested_on_the_oldest_python_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hide(monkeypatch, tmp_path / "pyenv", "3.6", "3.7")
    pythons = UvBuilder(UvOptions(python_downloads="never")).pythons(tmp_path)
    chosen = pythons.interpreter(None, "2019-03-01", None)
    assert chosen.era == "3.7"
    oldest = min(available_interpreters(), key=lambda v: tuple(map(int, v.split("."))))
    assert chosen.path == available_interpreters()[oldest].resolve()
    assert "needs Python <= 3.7" in chosen.lacks


def test_python_36_is_found_here() -> None:
    if "3.6" not in available_interpreters():
        pytest.fail("no Python 3.6 on this machine: `pyenv install 3.6`")


@pytest.mark.parametrize("version", ["3.0.7", "3.8.2"])
def test_every_plugin_bugbout_injects_runs_on_python_36(version: str, tmp_path: Path) -> None:
    """A hostile run (an agent's tree: impostor checks, body twins) with coverage, on
    Python 3.6 with a pytest of its era."""
    project = ProjectSettings(source="calc", tests="tests")
    tree = tmp_path / "tree"
    (tree / "calc").mkdir(parents=True)
    (tree / "tests").mkdir()
    (tree / "calc" / "__init__.py").write_text(TOKENS.format(fixed=" * 2"))
    (tree / "tests" / "test_calc.py").write_text(TEST.replace("[2]", "[3]"))
    builder = InterpreterBuilder(InterpreterOptions(path=str(old_pytest(version))))
    environment = builder.build(EnvironmentRequest(project=project, tree=tree, home=tmp_path))
    coverage: list[bytes] = []
    run = run_tests(
        environment, tree, ["tests"], project=project, label="t", timeout=120, hostile=True,
        coverage=coverage,
    )  # fmt: skip
    assert run.status == RunStatus.OK, (run.tampering, run.detail)
    assert run.outcomes == {
        "tests/test_calc.py::test_empty": Outcome.PASSED,
        "tests/test_calc.py::test_doubles_until_none": Outcome.FAILED,
    }
    assert b"calc/__init__.py" in coverage[0]


def _oracle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Oracle, str]:
    """Ground truth of a 2015 fix whose code ends a generator with ``raise StopIteration``:
    its test fails after the fix too on Python 3.7 and later (PEP 479)."""
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "home"))
    repo = RepositoryBuilder(tmp_path / "repo")
    dated_commit(
        repo,
        "Initial",
        {
            "setup.py": "from setuptools import setup\nsetup(name='calc', packages=['calc'])\n",
            "calc/__init__.py": TOKENS.format(fixed=""),
        },
        DAY,
    )
    fix = dated_commit(
        repo,
        "Fix tokens not doubling (#1)",
        {"calc/__init__.py": TOKENS.format(fixed=" * 2"), "tests/test_calc.py": TEST},
        DAY,
    )
    oracles = offline_ground_truth(repo.path, "calc")
    return oracles.root[fix[:12]], fix


@pytest.mark.slow
def test_a_2015_fix_gets_ground_truth_on_python_36(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    oracle, _ = _oracle(tmp_path, monkeypatch)
    assert oracle.environment.startswith("uv: Python 3.6."), oracle.environment
    assert oracle.status == "ok", oracle.reason
    assert oracle.fail_to_pass == ["tests/test_calc.py::test_doubles_until_none"]


@pytest.mark.slow
def test_without_python_36_the_reason_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hide(monkeypatch, tmp_path / "pyenv", "3.6")
    oracle, _ = _oracle(tmp_path, monkeypatch)
    assert oracle.environment.startswith("uv: Python 3.7."), oracle.environment
    assert "(for 3.6, not installed)" in oracle.environment
    assert oracle.status == "no-fail-to-pass"
    assert oracle.reason is not None
    assert oracle.reason.endswith(f"; an environment failure may explain it: {LACKS}")
    assert "\n" not in oracle.reason


def test_without_python_36_a_build_failure_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index without pytest: the stand-in's environment cannot be built, and the
    failure names the Python the era needed."""
    hide(monkeypatch, tmp_path / "pyenv", "3.6")
    tree = tmp_path / "tree"
    (tree / "calc").mkdir(parents=True)
    (tree / "calc" / "__init__.py").write_text("")
    with serve([]) as index:
        builder = UvBuilder(UvOptions(index_url=index.url, python_downloads="never"))
        request = EnvironmentRequest(
            project=ProjectSettings(source="calc"), tree=tree, date="2015-03-01", home=tmp_path
        )
        with pytest.raises(EnvironmentFailure) as failure:
            builder.build(request)
    reason = str(failure.value)
    assert "pytest" in reason
    assert reason.endswith(f"; {LACKS}")
    assert "\n" not in reason
