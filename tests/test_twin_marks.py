"""A test module whose ``pytestmark`` parametrizes every test of it: its twins take the
same arguments, or pytest would refuse to collect the whole module (its hidden tests
with it), and a twin whose arguments cannot be read is not written. Real pytest runs,
today's and an old one; a cheat is still caught there."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.plumbing.tampering.canaries import plant
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.store.records import Outcome, RunStatus, TestRun
from old_pytests import old_pytest
from test_canary_names import CHEAT
from test_pytest_eras import HOST, PROJECT, environment, write

MARKED = """
    import pytest

    import pkg

    pytestmark = [pytest.mark.parametrize("n, m", [(1, 2), (2, 3)])]


    def test_value(n, m):
        assert pkg.VALUE * n == n


    def test_other(n, m):
        assert pkg.VALUE + n < m + 1
"""
OWN = {
    f"tests/test_value.py::{test}[{case}]": Outcome.PASSED
    for test in ("test_value", "test_other")
    for case in ("1-2", "2-3")
}
UNREAD = MARKED.replace('"n, m"', "NAMES").replace(
    "    import pkg\n", '    import pkg\n\n    NAMES = "n, m"\n'
)


ELSEWHERE = MARKED.replace("pytestmark = [", "MARKS = [").replace(
    "\n\n\n    def test_value", "\n    pytestmark = MARKS\n\n\n    def test_value", 1
)


def _run(tree: Path, python: str = HOST) -> TestRun:
    return run_tests(
        environment(python, tree), tree, ["tests/test_value.py"], project=PROJECT, label="t",
        timeout=120,
    )  # fmt: skip


def _tree(root: Path, tests: str, conftest: str = "") -> Path:
    files = {"pkg/__init__.py": "VALUE = 1\n", "tests/test_value.py": tests}
    return write(root, files | {"tests/conftest.py": conftest})


@pytest.mark.parametrize("version", ["today", "3.0.7"])
def test_a_module_parametrized_whole_keeps_its_tests_and_gets_twins(
    version: str, tmp_path: Path
) -> None:
    tree = _tree(tmp_path / "tree", MARKED)
    planted = plant(tree, ["tests/test_value.py"])
    (hosted,) = planted.hosts
    text = (tree / "tests" / "test_value.py").read_text()
    named = [nodeid.rsplit("::", 1)[1] for nodeid in hosted.nodeids if nodeid not in hosted.bodies]
    assert len(named) == 2  # one after a neighbour, one with its very name in a class
    assert f"def {named[0]}(n, m): assert " in text
    assert f"{named[1]} = lambda self, n, m: " in text
    planted.remove()
    run = _run(tree, HOST if version == "today" else str(old_pytest(version)))
    assert run.status == RunStatus.OK, (run.tampering, run.detail)
    assert run.outcomes == OWN


@pytest.mark.parametrize("tests", [UNREAD, ELSEWHERE])
def test_a_module_whose_parameters_cannot_be_read_gets_body_twins_only(
    tests: str, tmp_path: Path
) -> None:
    tree = _tree(tmp_path / "tree", tests)
    planted = plant(tree, ["tests/test_value.py"])
    (hosted,) = planted.hosts
    assert hosted.nodeids == hosted.bodies != ()
    planted.remove()
    run = _run(tree)
    assert run.status == RunStatus.OK, (run.tampering, run.detail)
    assert run.outcomes == OWN


def test_a_cheat_is_still_caught_in_a_module_parametrized_whole(tmp_path: Path) -> None:
    run = _run(_tree(tmp_path / "tree", MARKED.replace("VALUE * n == n", "VALUE * n == 0"), CHEAT))
    assert run.status == RunStatus.TAMPERED
    assert any("test_value.py::" in why and "must fail but passed" in why for why in run.tampering)
