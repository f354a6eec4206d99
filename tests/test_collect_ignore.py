"""A test file the project's conftest leaves out (``collect_ignore``, ``collect_ignore_glob``,
a folder) is not collected when bugbout names it, as in the project's own run, on every
pytest from 2.7 to 9; a fix whose only test file is left out says so."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bugbout.core.store.records import Outcome, RunStatus, Task, TaskIssue
from bugbout.core.truth.oracle import judge_runs
from old_pytests import old_pytest
from test_pytest_eras import HOST, _run, write

GLOBS = (4, 3)
"""The first pytest that reads ``collect_ignore_glob``: an older one collects what it
names, in the project's own run too."""
PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"
LEFT_OUT = {
    "conftest.py": 'collect_ignore = ["legacy", "tests/sub"]\n',
    "tests/conftest.py": """
        import sys

        collect_ignore = ["test_future.py"] if sys.version_info < (99,) else []
        collect_ignore_glob = ["*_py2.py"]
    """,
    "tests/test_future.py": "raise ImportError('this Python is too old for me')\n",
    "tests/test_old_py2.py": "raise ImportError('this Python is too new for me')\n",
    "legacy/test_gone.py": "def test_gone():\n    assert False\n",
    "tests/sub/test_here.py": "def test_here():\n    pass\n",
    "tests/test_kept.py": "import pkg\n\n\ndef test_kept():\n    assert pkg.VALUE == 1\n",
    "pkg/__init__.py": "VALUE = 1\n",
}
TARGETS = [
    "tests/test_future.py",
    "tests/test_old_py2.py",
    "legacy/test_gone.py::test_gone",
    "tests/test_kept.py",
    "tests/sub/test_here.py",
]


def _python(version: str) -> str:
    return HOST if version == "host" else str(old_pytest(version))


@pytest.mark.parametrize(
    "version",
    [
        "host",
        pytest.param("2.7.3", marks=pytest.mark.slow),
        pytest.param("3.0.7", marks=pytest.mark.slow),
        pytest.param("3.4.2", marks=pytest.mark.slow),
        pytest.param("3.8.2", marks=pytest.mark.slow),
        pytest.param("4.6.11", marks=pytest.mark.slow),
        pytest.param("5.4.3", marks=pytest.mark.slow),
    ],
)
def test_a_file_the_project_leaves_out_is_not_collected(version: str, tmp_path: Path) -> None:
    """Each named file the conftests leave out is reported with what leaves it out (a
    glob only where pytest reads globs); the others run, several in one folder (pytest 3
    counts a folder asked of twice as a duplicate). pytest reads ``collect_ignore`` from
    the deepest conftest that sets it: the root's list does not reach into a folder whose
    conftest has one of its own."""
    tree = write(tmp_path, LEFT_OUT)
    run = _run(_python(version), tree, TARGETS)
    assert run.status == RunStatus.OK, (run.tampering, run.detail)
    assert run.outcomes == {
        "tests/test_kept.py::test_kept": Outcome.PASSED,
        "tests/sub/test_here.py::test_here": Outcome.PASSED,  # tests/conftest.py's list hides
    }
    python = PYTHON if version == "host" else "3.6"
    globs = version == "host" or tuple(map(int, version.split(".")[:2])) >= GLOBS
    assert run.collection_errors == {
        "tests/test_future.py": (
            f"not collected: tests/conftest.py's collect_ignore leaves it out on Python "
            f"{python}, as in the project's own test run"
        ),
        "tests/test_old_py2.py": (
            f"not collected: tests/conftest.py's collect_ignore_glob leaves it out on Python "
            f"{python}, as in the project's own test run"
            if globs
            else "ImportError: this Python is too new for me"
        ),
        "legacy/test_gone.py": (
            f"not collected: conftest.py's collect_ignore leaves it out on Python {python}, "
            "as in the project's own test run"
        ),
    }


FIXED = {
    "conftest.py": """
        import sys

        collect_ignore = ["tests/test_new_python.py"] if sys.version_info < (99,) else []
    """,
    "tests/test_new_python.py": "import pkg\n\n\ndef test_fixed():\n    assert pkg.VALUE == 2\n",
}


def test_a_fix_whose_only_test_file_is_left_out_says_so(tmp_path: Path) -> None:
    """Its test would fail before the fix and pass after it, but the project's own runs
    leave it out on this Python: no fail-to-pass, and the reason names the file and why."""
    runs = []
    for label, value in (("before-1", 1), ("after-1", 2)):
        tree = write(tmp_path / label, {**FIXED, "pkg/__init__.py": f"VALUE = {value}\n"})
        runs.append(_run(HOST, tree, ["tests/test_new_python.py"]).model_copy(
            update={"label": label}
        ))  # fmt: skip
    task = Task(
        id="t", sha="s", parent="p", date="2025-07-30T00:00:00+00:00", title="Fix",
        issue=TaskIssue(number=1), source_files=["pkg/__init__.py"],
        test_files=["tests/test_new_python.py"],
        added_tests=["tests/test_new_python.py::test_fixed"],
    )  # fmt: skip
    oracle = judge_runs(task, runs)
    assert oracle.fail_to_pass == []
    assert oracle.status != "ok"
    assert oracle.reason is not None
    assert (
        "tests/test_new_python.py: not collected: conftest.py's collect_ignore leaves it out "
        f"on Python {PYTHON}" in oracle.reason
    ), oracle.reason
