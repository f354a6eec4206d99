"""Running pytest on a tree and collecting every test's outcome by its exact node id.

Outcomes come from a small pytest plugin writing JSON lines to an inherited file
descriptor, never from pytest's terminal output. Every run has no network and a
timeout that kills its whole process group, and is tamper-evident: canary tests run
beside the tests asked for and the plugin's lines are authenticated
(:mod:`bugbout.core.canaries`).
"""

from __future__ import annotations

import os
import secrets
import subprocess
import tempfile
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from bugbout.core.canaries import Planted, check_canaries, key_line, plant, read_outcomes
from bugbout.core.environment import Environment
from bugbout.core.process import kill_group
from bugbout.core.records import Outcome, RunStatus, TestRun
from bugbout.core.settings import ProjectSettings
from bugbout.sandbox.network import offline

DETAIL_LIMIT = 4000


def outcomes_plugin_dir() -> Path:
    """The directory holding the ``bugbout_outcomes`` pytest plugin."""
    return Path(str(resources.files("bugbout.core") / "pytest_outcomes"))


def run_tests(
    environment: Environment,
    tree: Path,
    targets: list[str],
    *,
    project: ProjectSettings,
    label: str,
    timeout: float,
    confine: Callable[[list[str], Path, tuple[Path, ...]], list[str]] = (
        lambda argv, tree, writable: offline(argv)
    ),
) -> TestRun:
    """Run ``targets`` (paths relative to ``tree``) with pytest and return the outcomes.

    ``confine(argv, tree, writable)`` wraps the command for the tree (a sandbox that must
    also let it write ``writable``: its private HOME); by default it only switches the
    network off. A command that confines itself (``Command.contained``) is not wrapped.

    The run's canary modules are written beside the first target and removed afterwards;
    a run they (or the outcome stream) show meddled with is ``tampered``."""
    planted = plant(tree, targets)
    try:
        return _run(environment, tree, targets, planted, project, label, timeout, confine)
    finally:
        planted.remove()


def _run(  # noqa: PLR0917 - run_tests' arguments, with its canaries
    environment: Environment,
    tree: Path,
    targets: list[str],
    planted: Planted,
    project: ProjectSettings,
    label: str,
    timeout: float,
    confine: Callable[[list[str], Path, tuple[Path, ...]], list[str]],
) -> TestRun:
    key = secrets.token_hex(32)
    args = [
        "-p", "bugbout_outcomes", "-p", "no:cacheprovider", "-o", "addopts=",
        "--continue-on-collection-errors", "--rootdir", str(tree), "-q",
        *project.pytest_args, "--", *planted.targets(targets),
    ]  # fmt: skip
    command = environment.command(args, tree, [outcomes_plugin_dir()])
    with (
        tempfile.TemporaryFile() as outcomes,
        tempfile.TemporaryFile() as output,
        tempfile.TemporaryDirectory(prefix="bugbout-home-") as home,
    ):
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "HOME": home,
            "TMPDIR": home,
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONUNBUFFERED": "1",
            **project.env,
            **command.env,
            "BUGBOUT_OUTCOMES_FD": str(outcomes.fileno()),
            "BUGBOUT_SOURCE_DIR": project.source,
        }
        outcomes.write(key_line(key))
        outcomes.flush()
        started = time.monotonic()
        argv = command.argv if command.contained else confine(command.argv, tree, (Path(home),))
        process = subprocess.Popen(
            argv,
            cwd=command.cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            pass_fds=(outcomes.fileno(),),
            start_new_session=True,
        )
        try:
            exit_code: int | None = process.wait(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            kill_group(process)
            exit_code, timed_out = None, True
        duration = time.monotonic() - started
        outcomes.seek(0)
        stream = read_outcomes(outcomes.read(), key)
        output.seek(0)
        detail = output.read().decode("utf-8", "replace")[-DETAIL_LIMIT:]
    run = _summarise(stream.reports, label=label, exit_code=exit_code, duration=duration)
    if timed_out:
        run.status = RunStatus.TIMEOUT
    run = check_canaries(run, planted, stream)
    if run.status == RunStatus.OK and not run.outcomes:
        run.status = RunStatus.COLLECTION_FAILED if run.collection_errors else RunStatus.NO_TESTS
    if timed_out:
        run.detail = f"killed after {timeout:g} s\n{detail}"
    elif run.status != RunStatus.OK:
        run.detail = detail
    return run


def _summarise(
    reports: list[dict[str, str]], *, label: str, exit_code: int | None, duration: float
) -> TestRun:
    """One outcome per node id from the phase reports, and the run's status."""
    phases: dict[str, dict[str, str]] = {}
    collection_errors: dict[str, str] = {}
    for report in reports:
        if report["when"] == "collect":
            collection_errors[report["nodeid"]] = report.get("message", "")
        else:
            phases.setdefault(report["nodeid"], {})[report["when"]] = report["outcome"]
    outcomes = {nodeid: _outcome(by_phase) for nodeid, by_phase in phases.items()}
    if exit_code in (0, 1) or (exit_code == 2 and outcomes):
        status = RunStatus.OK
    elif exit_code == 5:
        status = RunStatus.NO_TESTS
    elif exit_code == 2 and collection_errors:
        status = RunStatus.COLLECTION_FAILED
    else:
        status = RunStatus.CRASHED
    if status == RunStatus.OK and collection_errors and not outcomes:
        status = RunStatus.COLLECTION_FAILED
    return TestRun(
        label=label,
        status=status,
        exit_code=exit_code,
        duration=round(duration, 3),
        outcomes=outcomes,
        collection_errors=collection_errors,
    )


def _outcome(by_phase: dict[str, str]) -> Outcome:
    setup = by_phase.get("setup")
    call = by_phase.get("call")
    teardown = by_phase.get("teardown")
    if setup == "failed":
        return Outcome.ERROR
    if call is None:
        return Outcome.XFAILED if setup == "xfailed" else Outcome.SKIPPED
    if call in ("xfailed", "xpassed"):
        return Outcome(call)
    if teardown == "failed":
        return Outcome.ERROR
    return Outcome.PASSED if call == "passed" else Outcome.FAILED
