"""One run of a JavaScript runner: its canaries planted, its process confined and timed,
its outcomes read from the signed channel (:mod:`.reports`) and judged.

A test file the project runs compiled is run as its compiled twin (:mod:`.compiled`),
with the variables the test script sets (:mod:`.script`).
A run plants a canary file beside its first target, whose one test must pass and whose
other must fail; the runner loads bugbout's reporter in its main process, which reads a
key from a descriptor it closes at once and signs each line it writes to another. The
run is ``tampered`` when a canary is wrong, a line is not signed, the reporter's tally
disagrees with its lines, or the runner saw the code under test end its process as if it
had finished; ``crashed`` when the runner never reached its tally.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

from bugbout.plugins.test_runners.javascript import compiled, script
from bugbout.plugins.test_runners.javascript.building import build
from bugbout.plugins.test_runners.javascript.reports import RunReport, read_report, test_id
from bugbout.test_runners import (
    Outcome,
    RunStatus,
    TestRun,
    TestRunRequest,
    file_of,
    scratch_folder,
    watch,
)

DETAIL_LIMIT = 4000
POLL = 1.0
"""Seconds between two looks at what a running runner printed."""
CANARY = "bugbout canary"
PASSES, FAILS = f"{CANARY} passes", f"{CANARY} fails"


class Runner(Protocol):
    """What a JavaScript runner plugin says of how it is started."""

    reporter: str
    """Its reporter's file name beside this module (``vitest_reporter.mjs``)."""

    def arguments(self, reporter: Path, targets: Sequence[str], skip: frozenset[str]) -> list[str]:
        """The arguments of ``node`` that run ``targets`` with ``reporter``, leaving out
        what it can of ``skip``."""
        ...

    def canary(self, beside: str) -> tuple[str, str]:
        """The canary file's suffix (``.test.ts``) and text, for the test file ``beside``
        (or folder): two tests, :data:`PASSES` and :data:`FAILS`."""
        ...

    def meddling(self, report: RunReport) -> list[str]:
        """What the runner itself saw the code under test do to the run."""
        ...

    def rooted(self, root: Path) -> list[str]:
        """The arguments that make ``root``, a link to the tree, the runner's root (none:
        the working directory is)."""
        ...

    @property
    def fatal(self) -> tuple[str, ...]:
        """What the runner prints when it cannot go on but does not end (Vitest 0.6's
        "Unknown reporter"): the run is ended at once, not at its timeout."""
        ...


@dataclass(frozen=True)
class RunnerExit:
    """How the runner's process ended."""

    exit_code: int | None
    """``None``: killed at the run's timeout."""
    duration: float
    output: str
    """The end of what it printed."""


@dataclass(frozen=True)
class CanaryFile:
    """The canary file of a run, relative to its tree."""

    path: str

    @property
    def passing(self) -> str:
        return test_id(self.path, [PASSES])

    @property
    def failing(self) -> str:
        return test_id(self.path, [FAILS])

    @property
    def ids(self) -> tuple[str, str]:
        return self.passing, self.failing


def run_javascript(runner: Runner, request: TestRunRequest) -> TestRun:
    """Run ``request`` with ``runner`` and judge what its reporter sent."""
    tree = plain(request.tree)
    failed = build(request, tree)
    if failed:
        return TestRun(label=request.label, status=RunStatus.CRASHED, detail=failed)
    twins = compiled.twins(tree, request.targets)
    written = {source: twin for twin, source in twins.items()}
    targets = [written.get(target, target) for target in request.targets]
    planted = _plant(runner, tree, targets)
    try:
        report, finished = _process(runner, request, tree, [*targets, planted.path])
    finally:
        (tree / planted.path).unlink(missing_ok=True)
    compiled.as_written(report, twins)
    return judged(runner, request, planted, report, finished)


def judged(
    runner: Runner,
    request: TestRunRequest,
    planted: CanaryFile,
    report: RunReport,
    finished: RunnerExit,
) -> TestRun:
    """The run ``report`` makes: canaries and tally checked, outcomes kept for targets."""
    tampering = report.problems + runner.meddling(report)
    canaries = {test: report.outcomes.pop(test, None) for test in planted.ids}
    report.failures.pop(planted.failing, None)
    kept = {
        test: outcome
        for test, outcome in report.outcomes.items()
        if test not in request.skip and _targeted(file_of(test), request.targets)
    }
    run = TestRun(
        label=request.label,
        status=RunStatus.OK,
        exit_code=finished.exit_code,
        duration=finished.duration,
        outcomes=kept,
        failures={test: text for test, text in report.failures.items() if test in kept},
        collection_errors=dict(report.file_errors),
    )
    if report.tally is not None and not tampering:
        if canaries[planted.passing] != Outcome.PASSED:
            tampering.append(f"the canary that must pass was {canaries[planted.passing]}")
        if canaries[planted.failing] != Outcome.FAILED:
            tampering.append(f"the canary that must fail was {canaries[planted.failing]}")
    output = finished.output
    if finished.exit_code is None:
        run.status, run.detail = RunStatus.TIMEOUT, f"killed after {request.timeout:g} s\n{output}"
    elif tampering:
        run.status, run.tampering, run.detail = RunStatus.TAMPERED, tampering, output
    elif report.tally is None or report.unhandled:
        said = [
            line.strip() for line in output.splitlines() if any(f in line for f in runner.fatal)
        ]
        why = (
            "; ".join(report.unhandled or said[:1])
            or "the runner ended before its reporter's tally"
        )
        run.status, run.detail = RunStatus.CRASHED, f"{why}\n{output}"
    elif not kept:
        status = RunStatus.COLLECTION_FAILED if report.file_errors else RunStatus.NO_TESTS
        run.status, run.detail = status, output
    return run


def _wait(
    process: subprocess.Popen[bytes], output: int, fatal: Sequence[str], timeout: float
) -> int | None:
    """The runner's exit code, ``None`` at ``timeout``; it is ended as soon as its
    ``output`` (a descriptor) says one of ``fatal``."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(subprocess.TimeoutExpired):
            return process.wait(max(0.0, min(POLL, deadline - time.monotonic())))
        if time.monotonic() >= deadline:
            return None
        size = os.fstat(output).st_size
        said = os.pread(output, DETAIL_LIMIT, max(0, size - DETAIL_LIMIT))
        if any(text.encode() in said for text in fatal):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            return process.wait()


def _targeted(file: str, targets: Sequence[str]) -> bool:
    path = PurePosixPath(file)
    return any(path == PurePosixPath(t) or PurePosixPath(t) in path.parents for t in targets)


def plain(tree: object) -> Path:
    """The folder a run works in: a test tree made a plain copy (the runner's process is
    not started inside an overlay's namespace)."""
    if isinstance(tree, Path):
        return tree
    materialise = getattr(tree, "materialise", None)
    if callable(materialise):
        materialise()
    where = getattr(tree, "tree", None)
    if not isinstance(where, Path):
        raise TypeError(f"a test run's tree must be a folder, not {tree!r}")
    return where


def _plant(runner: Runner, tree: Path, targets: Sequence[str]) -> CanaryFile:
    """The canary file, beside the first target (in it, when it is a folder), named like
    the first test file there (``.test.ts``), so the project's configuration collects it."""
    first = targets[0] if targets else "."
    folder = PurePosixPath(first) if (tree / first).is_dir() else PurePosixPath(first).parent
    suffix, text = runner.canary(first if (tree / first).is_file() else _named(tree, folder))
    path = folder / f"bugbout_canary_{secrets.token_hex(4)}{suffix}"
    (tree / path).write_text(text)
    return CanaryFile(str(path))


def _named(tree: Path, folder: PurePosixPath) -> str:
    """The first file in ``folder`` (or under it, ``node_modules`` aside) named
    ``*.test.*`` or ``*.spec.*``, or the folder itself without one."""
    for root, folders, files in os.walk(tree / folder):
        folders[:] = sorted(name for name in folders if name != "node_modules")
        for name in sorted(files):
            if ".test." in name or ".spec." in name:
                return Path(root, name).relative_to(tree).as_posix()
    return str(folder)


def _process(
    runner: Runner, request: TestRunRequest, tree: Path, targets: list[str]
) -> tuple[RunReport, RunnerExit]:
    """Start the runner confined, wait for it (killing its process group when it ends or
    at the timeout) and read its channel."""
    key = secrets.token_hex(32)
    reporter = Path(__file__).with_name(runner.reporter)
    with (
        tempfile.TemporaryFile() as keys,
        tempfile.TemporaryFile() as channel,
        tempfile.TemporaryFile() as output,
        scratch_folder("home") as home,
    ):
        root = Path(home, "tree")
        root.symlink_to(tree, target_is_directory=True)
        args = [*runner.arguments(reporter, targets, request.skip), *runner.rooted(root)]
        command = request.environment.command(args, tree, [])
        keys.write(key.encode())
        keys.flush()
        keys.seek(0)
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "LANG": "C.UTF-8",
            "HOME": home,
            "TMPDIR": home,
            "NO_COLOR": "1",
            "FORCE_COLOR": "0",
            **script.variables(tree),
            **request.project.env,
            **command.env,
            "BUGBOUT_KEY_FD": str(keys.fileno()),
            "BUGBOUT_OUTCOMES_FD": str(channel.fileno()),
            "BUGBOUT_CHANNEL": str(reporter.with_name("channel.cjs")),
        }
        argv = command.argv
        if not command.contained:
            argv = request.confine(argv, tree, (Path(home),))
        started = time.monotonic()
        process = subprocess.Popen(
            argv,
            cwd=command.cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            pass_fds=(keys.fileno(), channel.fileno()),
            start_new_session=True,
        )
        watch(process)  # a stopped bout kills its group
        exit_code = _wait(process, output.fileno(), runner.fatal, request.timeout)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # what it left running, or all of it
        process.wait()
        duration = time.monotonic() - started
        channel.seek(0)
        report = read_report(channel.read(), key)
        output.seek(0)
        tail = output.read()[-DETAIL_LIMIT:].decode("utf-8", "replace")

    def relative(text: str) -> str:
        return text.replace(f"{root}/", "").replace(f"{tree}/", "")

    report.failures = {test: relative(text) for test, text in report.failures.items()}
    report.file_errors = {path: relative(text) for path, text in report.file_errors.items()}
    return report, RunnerExit(exit_code, duration, relative(tail))
