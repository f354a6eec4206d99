"""``--dry-run``: each contestant really races on a one-bug repository, its CLI pointed at a
scripted model server on 127.0.0.1 (:mod:`bugbout.testing.model_server`), so the whole path
(adapter, CLI, sandbox, egress, patch) is proven without spending quota."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bugbout.core.contract.errors import BugboutError
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings
from bugbout.core.pipeline import build_contestants
from bugbout.core.plumbing.runtime.progress import Progress, SilentProgress
from bugbout.core.store.records import Oracle, OracleSet, Task, TaskIssue, TaskSet
from bugbout.onboarding.doctor.check import Check
from bugbout.onboarding.doctor.clis import build_contestant, install_hint
from bugbout.onboarding.doctor.known_agents import KNOWN_AGENTS, SECRET_VARIABLE, dry_entry

DRY_RUN_TIMEOUT = 300.0
"""Seconds one contestant may take on the dry run's task."""

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
FIX_LINE = "+    return a + b"
FIX_COMMAND = "sed -i 's/return a - b/return a + b/' src/calc/core.py"


def dry_run_checks(
    settings: BoutSettings, plugins: Plugins, progress: Progress | None = None
) -> list[Check]:
    """Each contestant on a one-bug repository, its CLI talking to a scripted model that
    fixes the bug with a shell command: passes when the attempt finished, its patch holds
    the fix and the scripted server was asked. ``command`` contestants cannot be scripted:
    their program must exist. Keeps the work directory when something failed."""
    from bugbout.testing.model_server import ModelServer, Say, Script, Shell

    checks: dict[str, Check] = {}
    scriptable: dict[str, dict[str, Any]] = {}
    for name, entry in sorted(settings.chosen("contestant").items()):
        label = f"{name} dry run"
        scripted = str(entry.get("agent")) in KNOWN_AGENTS
        candidate = dry_entry(entry, "http://127.0.0.1:9") if scripted else entry
        contestant, problem = build_contestant(settings, plugins, "contestant", name, candidate)
        if contestant is None:
            checks[name] = Check(label, False, f"cannot build it: {problem}")
        elif not shutil.which(contestant.agent.executable or ""):
            checks[name] = Check(
                label,
                False,
                f"{contestant.agent.executable!r} is not installed",
                install_hint(contestant),
            )
        elif scripted:
            scriptable[name] = entry
        else:
            checks[name] = Check(
                label, True, f"{contestant.agent.harness} cannot be scripted; its program exists"
            )
    if scriptable:
        script = Script([Shell(FIX_COMMAND), Say("Fixed add(): it subtracted.")])
        scratch = Path(tempfile.mkdtemp(prefix="bugbout-doctor-", dir=_short_temp()))
        with contextlib.ExitStack() as stack:
            servers = {name: stack.enter_context(ModelServer(script)) for name in scriptable}
            entries = {
                name: dry_entry(entry, servers[name].url) for name, entry in scriptable.items()
            }
            results = _race(settings, plugins, entries, scratch, progress or SilentProgress())
            for name, result in results.items():
                checks[name] = _judge(name, result, len(servers[name].scripted_requests))
        if not any(result.logdir and not checks[name].ok for name, result in results.items()):
            shutil.rmtree(scratch, ignore_errors=True)  # else its logs are named in the report
    return [checks[name] for name in sorted(checks)]


def _short_temp() -> str:
    """The temporary directory, or ``/tmp`` when that is much shorter: the race puts a
    Unix socket deep below it, and those paths are limited to about 100 bytes (macOS's
    temporary directory alone takes 50)."""
    default = tempfile.gettempdir()
    if len(default) > 16 and Path("/tmp").is_dir() and os.access("/tmp", os.W_OK):
        return "/tmp"
    return default


@dataclass(frozen=True)
class _Result:
    status: str
    wall_time: float
    source: str = ""
    error: str | None = None
    logdir: str = ""


def _race(
    settings: BoutSettings,
    plugins: Plugins,
    entries: dict[str, dict[str, Any]],
    scratch: Path,
    progress: Progress,
) -> dict[str, _Result]:
    """Race ``entries`` on the synthetic repository in ``scratch``; each one's result."""
    from bugbout.core.contract.settings import PluginChoice, ProjectSettings, RunSettings
    from bugbout.core.pipeline import race
    from bugbout.core.plumbing.tools import Tools
    from bugbout.core.store.store import Store

    started = time.monotonic()
    try:
        repository, task = _synthetic_repository(scratch / "repo")
        interpreter = _python_with_pytest()
        bout = BoutSettings(
            project=ProjectSettings(
                source="src/calc", tests="tests", interpreter=str(interpreter or sys.executable)
            ),
            environment=PluginChoice(name="interpreter" if interpreter else "uv"),
            sandbox=settings.sandbox,
            run=RunSettings(timeout=DRY_RUN_TIMEOUT),
            contestant=entries,
            root=repository,
        )
        oracle = Oracle(task_id=task.id, status="ok", fail_to_pass=["tests/test_core.py::test_add"])
        with _dry_run_environment(scratch / "home"):
            contestants = build_contestants(bout, plugins)
            tools = Tools.build(bout, plugins, Store(bout.store_dir))
            attempts = race(bout, plugins, tools, progress).run(
                TaskSet(examined=1, tasks=[task]),
                OracleSet({task.id: oracle}),
                contestants,
            )
    except (BugboutError, OSError, RuntimeError) as exc:
        elapsed = time.monotonic() - started
        return {name: _Result("infra-error", elapsed, error=str(exc)) for name in entries}
    found = {
        attempt.contestant: _Result(
            attempt.status.value,
            attempt.wall_time,
            attempt.patch.source,
            attempt.error,
            attempt.logdir,
        )
        for attempt in attempts
    }
    return {
        name: found.get(name, _Result("infra-error", 0.0, error="the race did not run it"))
        for name in entries
    }


def _judge(name: str, result: _Result, requests: int) -> Check:
    label = f"{name} dry run"
    wall = f"{result.wall_time:.1f} s"
    problems = []
    if result.status != "finished":
        problems.append(f"ended {result.status}" + (f" ({result.error})" if result.error else ""))
    else:
        if FIX_LINE not in result.source:
            problems.append("its patch does not fix the bug")
        if requests == 0:
            problems.append("it never asked the scripted model")
    if problems:
        where = f"; logs in {result.logdir}" if result.logdir else ""
        return Check(label, False, f"{'; '.join(problems)} after {wall}{where}")
    return Check(
        label,
        True,
        f"fixed the bug in {wall} through the real CLI ({requests} scripted model turns)",
    )


def _synthetic_repository(path: Path) -> tuple[Path, Task]:
    """A one-bug repository (the bug, then its fix) and its task."""
    from bugbout.testing.repository import RepositoryBuilder

    repo = RepositoryBuilder(path)
    parent = repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "calc"\nversion = "0"\n',
            "src/calc/__init__.py": "",
            "src/calc/core.py": BUGGY,
            "tests/test_core.py": "from calc.core import add\n\n\n"
            "def test_zero():\n    assert add(1, 0) == 1\n",
        },
    )
    title = "add() subtracts instead of adding"
    fix = repo.commit(
        f"Fix {title} (#1)",
        {
            "src/calc/core.py": FIXED,
            "tests/test_core.py": "from calc.core import add\n\n\n"
            "def test_zero():\n    assert add(1, 0) == 1\n\n\n"
            "def test_add():\n    assert add(2, 3) == 5\n",
        },
    )
    task = Task(
        id=Task.id_for(fix),
        sha=fix,
        parent=parent,
        date=repo.git("log", "-1", "--format=%cI", fix),
        title=title,
        issue=TaskIssue(number=1, title=title),
        problem_statement=f"{title}: add(2, 3) returns -1, not 5.",
        source_files=["src/calc/core.py"],
        test_files=["tests/test_core.py"],
        changed_test_files=["tests/test_core.py"],
        added_tests=["tests/test_core.py::test_add"],
    )
    return path, task


def _python_with_pytest() -> Path | None:
    """An interpreter that imports pytest (bugbout's own first), for a fast environment."""
    from bugbout.core.plumbing.environments.interpreters import available_interpreters

    candidates = [Path(sys.executable), *reversed(available_interpreters().values())]
    for python in dict.fromkeys(candidates):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            result = subprocess.run(
                [str(python), "-c", "import pytest"],
                capture_output=True,
                timeout=30,
                check=False,
            )
            if result.returncode == 0:
                return python
    return None


@contextlib.contextmanager
def _dry_run_environment(home: Path) -> Iterator[None]:
    """``BUGBOUT_HOME`` is ``home``, and no secret of the user's is in the environment
    (agents copy their vendor's keys from it): restored afterwards."""
    saved = dict(os.environ)
    try:
        for variable in list(os.environ):
            if SECRET_VARIABLE.search(variable):
                del os.environ[variable]
        os.environ["BUGBOUT_HOME"] = str(home)
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
