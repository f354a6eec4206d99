"""A fix whose test module skips itself as a whole as it is collected
(``pytest.importorskip`` of a library the environment lacks: structlog 2013's Twisted
tests) runs no test: the reason names the module and its skip, not the failure of
bugbout's own canary, on today's pytest and on the pytest of that era."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.store.records import RunStatus, Task, TaskIssue
from bugbout.core.truth.oracle import judge_runs
from old_pytests import old_pytest
from test_pytest_eras import HOST, _run, write

TEST = """
import pytest
pytest.importorskip("no_such_library")

import pkg


def test_fixed():
    assert pkg.VALUE == 2
"""


@pytest.mark.parametrize("version", ["today", "3.0.7"])
def test_a_module_skipped_whole_is_named_in_the_reason(version: str, tmp_path: Path) -> None:
    python = HOST if version == "today" else str(old_pytest(version))
    runs = []
    for label, value in (("before-1", 1), ("after-1", 2)):
        tree = write(
            tmp_path / label, {"pkg/__init__.py": f"VALUE = {value}\n", "tests/test_x.py": TEST}
        )
        run = _run(python, tree, ["tests/test_x.py"]).model_copy(update={"label": label})
        assert run.status == RunStatus.NO_TESTS, (run.status, run.detail)
        assert list(run.skipped_modules) == ["tests/test_x.py"]
        runs.append(run)
    task = Task(
        id="t", sha="s", parent="p", date="2013-08-30T00:00:00+00:00", title="Add it",
        issue=TaskIssue(number=1), source_files=["pkg/__init__.py"],
        test_files=["tests/test_x.py"], added_tests=["tests/test_x.py::test_fixed"],
    )  # fmt: skip
    oracle = judge_runs(task, runs)
    assert oracle.status == "environment-error"
    assert oracle.reason is not None
    assert oracle.reason.startswith(
        "the before-1 run ran no test: tests/test_x.py was skipped as a whole (could not "
        "import 'no_such_library'"
    ), oracle.reason
