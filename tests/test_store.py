"""The results store: atomic writes, self-ignoring, clear errors, one bout at a time."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import re
import select
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from bugbout.core.contract.errors import BugboutError, StoreError
from bugbout.core.store.locks import Holder, exclusive
from bugbout.core.store.records import (
    Oracle,
    OracleSet,
    Outcome,
    RunStatus,
    Task,
    TaskIssue,
    TaskSet,
    TestRun,
)
from bugbout.core.store.store import ORACLES, TASKS, Store, write_atomic
from bugbout.testing import RepositoryBuilder


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
        "import sys; from bugbout.core.store.store import write_atomic; from pathlib import Path\n"
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
        "import os, sys; from pathlib import Path; from bugbout.core.store.store import Store\n"
        "with Store(Path(sys.argv[1])).lock():\n    os.kill(os.getpid(), 9)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(tmp_path / ".bugbout")], check=False)
    with Store(tmp_path / ".bugbout").lock():
        pass
    assert os.path.exists(tmp_path / ".bugbout" / "lock")


def test_a_record_with_bytes_that_are_not_utf8_is_a_one_line_error_naming_it(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / ".bugbout")
    store.write(TASKS, sample_tasks())
    path = store.path(TASKS)
    path.write_bytes(path.read_bytes().replace(b"It breaks", b"It br\xe9aks"))
    with pytest.raises(StoreError, match=r"^\S+/tasks\.json is corrupt \(.*\); move it aside"):
        store.read(TASKS, TaskSet)


def test_a_record_that_cannot_be_read_is_a_one_line_error_naming_it(tmp_path: Path) -> None:
    store = Store(tmp_path / ".bugbout")
    store.path(ORACLES).mkdir(parents=True)
    with pytest.raises(StoreError, match=r"cannot read \S+/oracles\.json: Is a directory"):
        store.read(ORACLES, OracleSet)


def test_a_corrupt_record_about_to_be_rebuilt_is_kept_aside_with_a_warning(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / ".bugbout")
    store.write(TASKS, sample_tasks())
    truncated = store.path(TASKS).read_bytes()[:-40]
    store.path(TASKS).write_bytes(truncated)
    warnings: list[str] = []
    store.set_aside_if_corrupt(TASKS, TaskSet, warnings.append)
    assert not store.path(TASKS).exists()
    [aside] = store.root.glob("tasks.json.corrupt-*")
    assert aside.read_bytes() == truncated
    [warning] = warnings
    assert re.fullmatch(
        rf"{re.escape(str(store.path(TASKS)))} is corrupt \(file: Invalid JSON: EOF [^\n]*\): "
        rf"rebuilding it; kept it as {re.escape(str(aside))}",
        warning,
    ), warning
    store.write(TASKS, sample_tasks())
    store.set_aside_if_corrupt(TASKS, TaskSet, warnings.append)  # a sound record stays
    assert store.read(TASKS, TaskSet) == sample_tasks()
    assert len(warnings) == 1


HOLD = """\
import select
import sys
from pathlib import Path
from bugbout.core.store.store import Store

store, kind, sweep = Store(Path(sys.argv[1])), sys.argv[2], sys.argv[3]
lock = store.lock() if kind == "bout" else store.claim(kind, "busy", sweep=sweep, warn=print)
with lock:
    print("held", flush=True)
    if not select.select([sys.stdin], [], [], float(sys.argv[4]))[0]:
        print("letting go untold", flush=True)  # said before the lock is released
"""
"""A process that holds a store's lock (``bout``) or a claim (``ground-truth``) until its
standard input is closed, or for ``GIVE_UP`` seconds, after which it says so and lets go."""
GIVE_UP = 60.0
"""Seconds a holder waits to be told to release: whoever wants the lock and waits for it
instead of being refused gets it then (and does not hang the test)."""


@contextlib.contextmanager
def holding(root: Path, kind: str, sweep: str = "") -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(root), kind, sweep, str(GIVE_UP)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == "held\n"
        yield process
    finally:
        if process.stdin:
            process.stdin.close()
        process.wait(timeout=60)


def still_holding(holder: subprocess.Popen[str]) -> bool:
    """Whether ``holder`` has not let go on its own: it says so before it does."""
    return not select.select([holder.stdout], [], [], 0)[0]


def attempt(hold: Callable[[], contextlib.AbstractContextManager[None]]) -> str:
    """What trying to hold the lock came to: the error it was refused with, or ``taken``."""
    try:
        with hold():
            return "taken"
    except BugboutError as refused:
        return str(refused)


def test_a_second_bout_is_refused_at_once_naming_the_holder(tmp_path: Path) -> None:
    root = tmp_path / ".bugbout"
    with holding(root, "bout") as holder:
        message = attempt(Store(root).lock)
        assert still_holding(holder)  # refused while it held: not waited for
    assert message.startswith(
        f"another bugbout is already working on {root}: pid {holder.pid} ({sys.executable} -c "
    )
    assert message.endswith("; wait for it to finish (or stop it) and try again")
    assert "\n" not in message
    with Store(root).lock():  # released by the holder
        pass


def test_ground_truth_is_refused_at_once_except_to_jobs_of_the_holders_sweep(
    tmp_path: Path,
) -> None:
    root = tmp_path / ".bugbout"
    store = Store(root)

    def claim(sweep: str = "") -> contextlib.AbstractContextManager[None]:
        return store.claim("ground-truth", "computing ground truth", sweep=sweep, warn=print)

    with holding(root, "ground-truth", sweep="/sweeps/1") as holder:
        for sweep in ("", "/sweeps/2"):
            message = attempt(functools.partial(claim, sweep))
            assert still_holding(holder)  # refused while it held: not waited for
            assert f"another bugbout is computing ground truth: pid {holder.pid} (" in message
        held = threading.Event()

        def same_sweep() -> None:
            with claim("/sweeps/1"):
                held.set()

        waiting = threading.Thread(target=same_sweep)
        waiting.start()
        assert not held.wait(2)  # a job of the same sweep waits for it
        assert holder.stdin is not None
        holder.stdin.close()
        assert held.wait(30)
        waiting.join()


def test_a_holder_paused_between_clearing_its_line_and_releasing_is_waited_for(
    tmp_path: Path,
) -> None:
    """A holder clears its line, then releases: a loaded machine may pause it between
    the two. The lock is then held by nobody it can name, and refusing it would fail a
    bout for a lock about to be free."""
    path = tmp_path / "ground-truth.lock"
    with path.open("a+", encoding="utf-8") as releasing:
        fcntl.flock(releasing, fcntl.LOCK_EX)  # held, naming nobody
        released = threading.Event()

        def release() -> None:
            released.set()
            fcntl.flock(releasing, fcntl.LOCK_UN)

        threading.Timer(1.0, release).start()
        with exclusive(path, Holder.this_process(), doing="busy", warn=print):
            assert released.is_set()  # taken once released, not refused nor taken while held


@pytest.mark.parametrize("kind", ["bout", "ground-truth"])
def test_a_lock_whose_holder_was_killed_is_taken_over_with_a_word(
    tmp_path: Path, kind: str
) -> None:
    root = tmp_path / ".bugbout"
    store, warnings = Store(root), list[str]()

    def take() -> contextlib.AbstractContextManager[None]:
        if kind == "bout":
            return store.lock(warnings.append)
        return store.claim(kind, "busy", warn=warnings.append)

    with holding(root, kind) as holder:
        holder.kill()
        holder.wait()
    with take():
        pass
    [warning] = warnings
    assert warning.startswith(f"taking over {root}/")
    assert f": pid {holder.pid} ({sys.executable} -c " in warning
    assert warning.endswith(") ended without releasing it")
    with take():
        pass
    assert len(warnings) == 1  # released properly: nothing left to take over


# -- as a user meets them: the command line ------------------------------------------------

WAIT = 300
"""Seconds the fix's slow test sleeps: how long ``bugbout tasks`` holds ground truth."""


def project(path: Path) -> Path:
    """A repository with one fix whose tests take ``WAIT`` seconds, and its
    ``bugbout.yaml`` (the current interpreter, one contestant that changes nothing)."""
    repo = RepositoryBuilder(path)
    repo.commit(
        "Initial commit",
        {
            "pyproject.toml": '[project]\nname = "calc"\nrequires-python = ">=3.9"\n',
            "src/calc/__init__.py": "",
            "src/calc/ops.py": "def add(a, b):\n    return a - b\n",
            "tests/test_ops.py": "from calc.ops import add\n",
        },
    )
    repo.commit(
        "Fix add (#1)",
        {
            "src/calc/ops.py": "def add(a, b):\n    return a + b\n",
            "tests/test_ops.py": (
                "import time\n\nfrom calc.ops import add\n\n\ndef test_add():\n"
                f"    assert add(1, 2) == 3\n\n\ndef test_slowly():\n    time.sleep({WAIT})\n"
            ),
        },
    )
    python = json.dumps(sys.executable)
    (path / "bugbout.yaml").write_text(
        "defaults:\n  - base\n  - override environment: interpreter\n  - _self_\n"
        "project: {source: src/calc, tests: tests}\n"
        "issue-sources: {github: null, file: null}\n"
        f"contestants:\n  a: {{agent: command, command: [{python}, -c, pass]}}\n"
    )
    return path


def bugbout(*args: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bugbout", *args],
        cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def test_bugbout_tasks_says_which_record_is_corrupt_and_keeps_it(tmp_path: Path) -> None:
    """A truncated ``tasks.json`` is rebuilt with a warning and kept aside; an
    ``oracles.json`` with bytes that are not UTF-8 stops the command with one line."""
    repo = project(tmp_path / "repo")
    store = repo / ".bugbout"
    store.mkdir()
    truncated = '{"examined": 2, "excluded": {}, "tasks": [{"id": "0123'
    (store / "tasks.json").write_text(truncated)
    oracles = b'{"abc": {"task_id": "abc", "status": "ok", "reason": "caf\xe9"}}'
    (store / "oracles.json").write_bytes(oracles)

    result = bugbout("tasks", cwd=repo)

    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    [aside] = store.glob("tasks.json.corrupt-*")
    assert aside.read_text() == truncated
    assert len(TaskSet.model_validate_json((store / "tasks.json").read_text()).tasks) == 1
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: {store / 'tasks.json'} is corrupt (file: {_json_error(truncated)}): "
        f"rebuilding it; kept it as {aside}"
    ]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: {store / 'oracles.json'} is corrupt (file: {_json_error(oracles)}); "
        "move it aside and run the command again to rebuild it"
    ]
    assert (store / "oracles.json").read_bytes() == oracles


def _json_error(data: str | bytes) -> str:
    with pytest.raises(ValidationError) as invalid:
        TaskSet.model_validate_json(data)
    return str(invalid.value.errors()[0]["msg"])


@pytest.mark.slow
def test_bugbout_run_stops_at_once_while_another_bugbout_computes_ground_truth(
    tmp_path: Path,
) -> None:
    repo = project(tmp_path / "repo")
    with (tmp_path / "holder.log").open("w") as log:
        holder = subprocess.Popen(
            [sys.executable, "-m", "bugbout", "tasks"], cwd=repo, stdout=log, stderr=log
        )
    try:
        deadline = time.monotonic() + WAIT / 2
        while not (repo / ".bugbout" / "tasks.json").exists():  # mined: now the tests run
            assert holder.poll() is None, (tmp_path / "holder.log").read_text()
            assert time.monotonic() < deadline, (tmp_path / "holder.log").read_text()
            time.sleep(0.2)

        result = bugbout("run", cwd=repo, timeout=WAIT / 2)

        assert holder.poll() is None  # still computing: the run did not wait for it
        assert result.returncode == 2, result.stderr
        assert result.stderr.splitlines()[-1] == (
            f"error: another bugbout is mining or computing ground truth on {repo / '.bugbout'}: "
            f"pid {holder.pid} ({shlex.join([sys.executable, '-m', 'bugbout', 'tasks'])}); "
            "wait for it to finish (or stop it) and try again"
        )
    finally:
        holder.kill()
        holder.wait()
