"""The results store: atomic writes, self-ignoring, clear errors, one bout at a time."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bugbout.core.errors import BugboutError, StoreError
from bugbout.core.records import (
    Oracle,
    OracleSet,
    Outcome,
    RunStatus,
    Task,
    TaskIssue,
    TaskSet,
    TestRun,
)
from bugbout.core.store import ORACLES, TASKS, Store, write_atomic


def sample_tasks() -> TaskSet:
    task = Task(
        id="abc", sha="abc" * 13 + "a", parent="def", date="2024-05-01T10:00:00+02:00",
        title="Fix it (#3)", issue=TaskIssue(number=3, title="It breaks", url=None),
        problem_statement="It breaks\n\nwhen ...", source_files=["src/p/a.py"],
        test_files=["tests/test_a.py"], scored=False, reason="no test failed",
    )  # fmt: skip
    return TaskSet(examined=10, excluded={"not-a-fix": 9}, tasks=[task])


def test_records_round_trip(tmp_path: Path) -> None:
    store = Store(tmp_path / ".bugbout")
    tasks = sample_tasks()
    store.write(TASKS, tasks)
    assert store.read(TASKS, TaskSet) == tasks
    run = TestRun(label="before", status=RunStatus.OK, outcomes={"t.py::x[a\\nb]": Outcome.FAILED})
    oracles = OracleSet(
        {"abc": Oracle(task_id="abc", status="ok", fail_to_pass=["t.py::x[a\\nb]"], runs=[run])}
    )
    store.write(ORACLES, oracles)
    assert store.read(ORACLES, OracleSet) == oracles
    assert list(__import__("json").loads(store.path(ORACLES).read_text())) == ["abc"]


def test_store_ignores_itself_in_git(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    Store(tmp_path / ".bugbout").write(TASKS, sample_tasks())
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=tmp_path,
                            capture_output=True, text=True, check=True)  # fmt: skip
    assert status.stdout == ""


def test_missing_record_is_none_and_corrupt_record_is_a_clear_error(tmp_path: Path) -> None:
    store = Store(tmp_path / ".bugbout")
    assert store.read(TASKS, TaskSet) is None
    store.ensure()
    store.path(TASKS).write_text('{"examined": "lots"')
    with pytest.raises(StoreError, match=r"tasks.json is corrupt .*move it aside"):
        store.read(TASKS, TaskSet)


def test_a_write_that_fails_leaves_the_old_record(tmp_path: Path) -> None:
    target = tmp_path / "record.json"
    write_atomic(target, "old")

    with pytest.raises(TypeError):
        write_atomic(target, 42)  # type: ignore[arg-type]
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["record.json"]


def test_kill_during_writes_never_leaves_a_torn_record(tmp_path: Path) -> None:
    """A writer killed with SIGKILL mid-loop leaves a complete record behind."""
    target = tmp_path / "tasks.json"
    script = (
        "import sys; from bugbout.core.store import write_atomic; from pathlib import Path\n"
        "p = Path(sys.argv[1]); i = 0\n"
        "while True:\n"
        '    body = \'{"examined": %d, "excluded": {}, "tasks": []}\' % i\n'
        "    write_atomic(p, body + ' ' * 100000); i += 1\n"
    )
    process = subprocess.Popen([sys.executable, "-c", script, str(target)])
    try:
        while not target.exists():
            time.sleep(0.01)
        time.sleep(0.5)
    finally:
        process.kill()
        process.wait()
    record = TaskSet.model_validate_json(target.read_text())  # a torn record fails here
    assert record.examined > 0, "the writer was killed before it replaced the record once"


def test_second_bout_on_one_store_is_refused(tmp_path: Path) -> None:
    store = Store(tmp_path / ".bugbout")
    with (
        store.lock(),
        pytest.raises(BugboutError, match="another bugbout is already working"),
        Store(tmp_path / ".bugbout").lock(),
    ):
        pass
    with store.lock():
        pass


def test_lock_is_released_when_its_holder_dies(tmp_path: Path) -> None:
    code = (
        "import os, sys; from pathlib import Path; from bugbout.core.store import Store\n"
        "with Store(Path(sys.argv[1])).lock():\n    os.kill(os.getpid(), 9)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(tmp_path / ".bugbout")], check=False)
    with Store(tmp_path / ".bugbout").lock():
        pass
    assert os.path.exists(tmp_path / ".bugbout" / "lock")
