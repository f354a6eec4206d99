"""A task's scrubbed statement is kept (``statements.json``) and reused while what it is
told from is unchanged; a change to any of it tells it again. On a real git history."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bugbout.core.mine import statements
from bugbout.core.mine.reported import Parents, fix_only, told
from bugbout.core.mine.statements import STATEMENTS, ToldStatements, tell_statements
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.store.records import Oracle, OracleSet, Task, TaskIssue, TaskSet
from bugbout.core.store.store import Store
from bugbout.testing import RepositoryBuilder

PARSE = "def parse_number(text):\n    return float(text.lstrip('-'))\n"
FIXED = (
    "def _keep_sign(text, value):\n    return -value if text.startswith('-') else value\n\n\n"
    "def parse_number(text):\n    return _keep_sign(text, float(text.lstrip('-')))\n"
)
TESTS = "from calc import parse_number\n\n\ndef test_plain():\n    assert parse_number('2') == 2\n"
NEGATIVE = "\n\ndef test_negative():\n    assert parse_number('-2') == -2\n"
KEPT = "the statement kept in statements.json"


def _task(root: Path) -> tuple[Path, Task]:
    """A fix that names no issue, on a history of two commits."""
    repo = RepositoryBuilder(root)
    parent = repo.commit("Initial commit", {"calc.py": PARSE, "tests/test_calc.py": TESTS})
    sha = repo.commit(
        "Fix negative numbers losing their sign\n\nThey came back positive. "
        "A minus sign is lost in _keep_sign.",
        {"calc.py": FIXED, "tests/test_calc.py": TESTS + NEGATIVE},
    )
    task = Task(
        id="t1",
        tier="fix",
        sha=sha,
        parent=parent,
        date="2024-01-01T00:00:00+00:00",
        title="Fix negative numbers losing their sign",
        issue=TaskIssue(number=0),
        source_files=["calc.py"],
        test_files=["tests/test_calc.py"],
        changed_test_files=["tests/test_calc.py"],
    )
    return repo.path, task


def _oracle(test: str) -> OracleSet:
    return OracleSet({"t1": Oracle(task_id="t1", status="ok", fail_to_pass=[test])})


def _tell(repo: Path, store: Store, task: Task, oracles: OracleSet) -> str:
    """The statement ``task`` is given (a copy of it: the one given is not changed)."""
    tasks = TaskSet(tasks=[task.model_copy(deep=True)])
    tell_statements(repo, store, tasks, oracles, drafter=None, jobs=1, warn=pytest.fail)
    return tasks.tasks[0].problem_statement


def _keep(store: Store, text: str) -> None:
    """Replace the text of every kept statement by ``text``, under its key."""
    kept = store.read(STATEMENTS, ToldStatements)
    assert kept is not None and list(kept.root) == ["t1"]
    for statement in kept.root.values():
        statement.statement = text
    store.write(STATEMENTS, kept)


def test_a_statement_is_reused_while_what_it_is_told_from_is_unchanged(tmp_path: Path) -> None:
    repo, task = _task(tmp_path / "repo")
    store = Store(tmp_path / ".bugbout")
    oracles = _oracle("tests/test_calc.py::test_negative")
    first = _tell(repo, store, task, oracles)
    assert first.startswith("Fix negative numbers losing their sign")
    assert "- tests/test_calc.py::test_negative" in first
    assert "_keep_sign" not in first  # a name only the fix introduces is not told
    kept = store.read(STATEMENTS, ToldStatements)
    assert kept is not None and kept.root["t1"].statement == first
    _keep(store, KEPT)
    assert _tell(repo, store, task, oracles) == KEPT


@pytest.mark.parametrize(
    "change",
    ["failures", "fix", "tier", "teller"],
)
def test_a_statement_is_told_again_when_what_it_is_told_from_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    repo, task = _task(tmp_path / "repo")
    store = Store(tmp_path / ".bugbout")
    oracles = _oracle("tests/test_calc.py::test_negative")
    _tell(repo, store, task, oracles)
    _keep(store, KEPT)
    if change == "failures":
        oracles = _oracle("tests/test_calc.py::test_plain")
    elif change == "fix":
        task = task.model_copy(update={"source_files": []})
    elif change == "tier":
        task = task.model_copy(update={"tier": "feature"})
    else:
        monkeypatch.setattr(statements, "TELLER", f"{statements.TELLER}-changed")
    again = _tell(repo, store, task, oracles)
    assert again != KEPT
    assert again.startswith("Fix negative numbers losing their sign")
    kept = store.read(STATEMENTS, ToldStatements)
    assert kept is not None and kept.root["t1"].statement == again
    if change == "failures":
        assert "- tests/test_calc.py::test_plain" in again
    if change == "tier":
        assert "Tests written for the change asked for fail" in again


def test_a_statement_told_from_its_message_looks_only_for_the_names_it_shows(
    tmp_path: Path,
) -> None:
    repo, task = _task(tmp_path / "repo")
    with Git(repo) as git:
        whole = told(git, task, fix=fix_only(git, task))
        parents = Parents(git)
        assert told(git, task, parents=parents) == whole
        assert "They came back positive." in whole
        assert "_keep_sign" in git.message(task.sha) and "lost in" not in whole
        assert parents.trees  # the fix names _keep_sign: the parent's files were searched
        quiet = task.model_copy(update={"sha": _commit(repo, "Fix a sign\n\nIt was lost.")})
        parents = Parents(git)
        assert told(git, quiet, parents=parents) == told(git, quiet, fix=fix_only(git, quiet))
        assert not parents.trees  # its message shows no name: nothing is searched


def _commit(repo: Path, message: str) -> str:
    """A commit of ``message`` holding the fix of :func:`_task` again, on its parent."""
    git = ["git", "-C", str(repo)]
    subprocess.run([*git, "checkout", "-q", "HEAD~1"], check=True)
    subprocess.run([*git, "checkout", "-q", "HEAD@{1}", "--", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", message], check=True)
    done = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True)
    return done.stdout.strip()
