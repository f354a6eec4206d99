"""A failing test is reported without its traceback: bugbout keeps one line of it, the
line pytest's traceback held, and pytest no longer parses the test's module to show
source nobody reads (``bugbout_failures``)."""

from __future__ import annotations

from pathlib import Path

from bugbout.core.store.records import Outcome, RunStatus
from small_runs import run_small

COUNTED = """
import ast

_parse = ast.parse


def _counted(source, *args, **kwargs):
    if isinstance(source, str) and "def test_raised" in source:
        with open({mark!r}, "a") as mark:
            mark.write("parse\\n")
    return _parse(source, *args, **kwargs)


ast.parse = _counted
"""
FAILING = """
import pytest


def double(x):
    return x + x + 1


def test_asserted():
    assert double(1) == 2


def test_raised():
    raise ValueError("bad value\\nsecond line")


def test_chained():
    try:
        {}["k"]
    except KeyError as error:
        raise RuntimeError("wrapped") from error


def test_failed():
    pytest.fail("failed on purpose")


def test_plain_failed():
    pytest.fail("said plainly", pytrace=False)


class TestGroup:
    def test_in_class(self):
        assert [1, 2] == [1, 3]
"""
PASSING = "".join(
    f"\n\ndef test_fine_{n}():\n    assert sorted([{n}, 1]) == [1, {n}]\n" for n in range(2, 200)
)


def test_a_failure_keeps_its_line_and_costs_no_parse_of_its_module(tmp_path: Path) -> None:
    mark = tmp_path / "parses"
    conftest = COUNTED.format(mark=str(mark))
    files = {"conftest.py": conftest, "test_long.py": FAILING + PASSING}
    run = run_small(tmp_path, files, hostile=False)

    assert run.status == RunStatus.OK, run.tampering or run.detail
    failed = {test for test, outcome in run.outcomes.items() if outcome == Outcome.FAILED}
    assert len(failed) == 6 and len(run.outcomes) == 6 + 198, run.outcomes
    assert run.failures == {
        "tests/test_long.py::test_asserted": "assert 3 == 2",
        "tests/test_long.py::test_raised": "ValueError: bad value",
        "tests/test_long.py::test_chained": "KeyError: 'k'",
        "tests/test_long.py::test_failed": "Failed: failed on purpose",
        "tests/test_long.py::test_plain_failed": "said plainly",
        "tests/test_long.py::TestGroup::test_in_class": "assert [1, 2] == [1, 3]",
    }
    assert not mark.exists(), mark.read_text()  # before: a parse of it per failing test


AFTER = """
def test_fails():
    assert 1 == 2


def test_looks_back(request):
    failed = request.session.items[0]
    assert "repr_failure" not in vars(failed)  # pytest's own once its report is made
"""


def test_a_failed_item_is_pytest_s_own_again_once_its_report_is_made(tmp_path: Path) -> None:
    run = run_small(tmp_path, {"test_after.py": AFTER}, hostile=False)

    assert run.status == RunStatus.OK, run.tampering or run.detail
    assert run.outcomes == {
        "tests/test_after.py::test_fails": Outcome.FAILED,
        "tests/test_after.py::test_looks_back": Outcome.PASSED,
    }
    assert run.failures == {"tests/test_after.py::test_fails": "assert 1 == 2"}
