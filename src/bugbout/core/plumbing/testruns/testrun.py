"""Running pytest on a tree and collecting every test's outcome by its exact node id.

Outcomes come from a small pytest plugin writing JSON lines to an inherited file
descriptor, never from pytest's terminal output. Every run has no network and a
timeout that kills its whole process group. A test that kills pytest (a segfault, an
abort, ``os._exit``) is failed, and the others are run again without it. Every run is
tamper-evident: canary tests run beside the tests asked for and the plugin's lines are
authenticated (:mod:`bugbout.core.plumbing.tampering.canaries`).
"""

from __future__ import annotations

import functools
import json
import os
import secrets
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from bugbout.core.contract.errors import EnvironmentFailure
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.confinement.confine import Confine, SandboxConfine, runs_in_overlays
from bugbout.core.plumbing.confinement.leftovers import VARIABLE, Leftovers
from bugbout.core.plumbing.confinement.limits import HeldConfine, held_as, run_guard
from bugbout.core.plumbing.confinement.process import kill_group, wait
from bugbout.core.plumbing.confinement.scratch import scratch_folder
from bugbout.core.plumbing.environments.environment import Environment
from bugbout.core.plumbing.environments.py2_tree import converted
from bugbout.core.plumbing.environments.pytest_era import pytest_era
from bugbout.core.plumbing.project.pytest_options import collected_names
from bugbout.core.plumbing.runtime.home import bugbout_home
from bugbout.core.plumbing.runtime.stopping import stopping, watch
from bugbout.core.plumbing.tampering.canaries import (
    Planted,
    canary_directory,
    check_canaries,
    key_line,
    plant,
    read_outcomes,
)
from bugbout.core.plumbing.tampering.naming import naming
from bugbout.core.plumbing.testruns.hung import HangWatch
from bugbout.core.plumbing.testruns.plugin_code import VARIABLE as CODE_VARIABLE
from bugbout.core.plumbing.testruns.plugin_code import plugin_code, sealed
from bugbout.core.plumbing.testruns.run_reports import running_test, summarise
from bugbout.core.plumbing.testruns.unstarted import PAUSE, TRIES, TestRunNotStarted, never_started
from bugbout.core.plumbing.trees.testtree import TestTree
from bugbout.core.store.records import Outcome, RunStatus, TestRun
from bugbout.sandbox.identity import hand_over
from bugbout.sandbox.network import offline
from bugbout.sandbox.overlay import enter

DETAIL_LIMIT = 4000
CRASH_LIMIT = 5
"""How many tests that kill pytest one run sets aside; one more and the run is crashed."""
POLL = 1.0
"""Seconds between two looks at a running pytest's outcomes for a test that hangs."""
COVERAGE_LIMIT = 256_000_000
"""The most bytes of the coverage map one pytest process may write (the rest is not read)."""
_NOT_A_CRASH = (RunStatus.TIMEOUT, RunStatus.TAMPERED)
"""Runs whose running test is not set aside: one that hung, and one the code under test
ended as if pytest had finished (``os._exit(0)``: tampering, not a crash)."""


def outcomes_plugin_dir() -> Path:
    """The directory holding the ``bugbout_outcomes`` pytest plugin."""
    return Path(str(resources.files(__package__) / "pytest_outcomes"))


def run_tests(
    environment: Environment,
    tree: Path | TestTree,
    targets: list[str],
    *,
    project: ProjectSettings,
    label: str,
    timeout: float,
    confine: Confine = (lambda argv, tree, writable: offline(argv)),
    skip: frozenset[str] = frozenset(),
    coverage: list[bytes] | None = None,
    hostile: bool = True,
) -> TestRun:
    """Run ``targets`` (paths relative to ``tree``) with pytest and return the outcomes.

    ``skip`` names tests not to run (they are left out of the outcomes). With a
    ``coverage`` list, each pytest process also records which files of the package each
    test runs (``bugbout_coverage``), and the list gets what it wrote, at most
    ``COVERAGE_LIMIT`` bytes (read by :mod:`bugbout.core.plumbing.selection.affected`).

    ``confine(argv, tree, writable)`` wraps the command for the tree (a sandbox that must
    also let it write ``writable``: its private HOME); by default it only switches the
    network off. A command that confines itself (``Command.contained``) is not wrapped.

    When pytest dies while a test runs, or one test runs past ``project.test-timeout``,
    that test is ``failed`` and listed in ``crashes`` (``crashed (signal 11)``, ``hung
    (still running after 300 s)``), and pytest runs again without it, up to
    ``CRASH_LIMIT`` tests; each pytest process has ``timeout`` seconds.

    The run's canary modules are written beside the first target and removed afterwards;
    a run they (or the outcome stream) show meddled with is ``tampered``. Only a
    ``hostile`` tree (one an agent's patch or tests may have touched) gets twins in its
    test files, must-fail tests named after their neighbours and copies of its tests
    that run their code again: the maintainers' own code (ground truth, injected bugs)
    has nothing to fake, a copy's side effects could move it, and each failing twin
    costs pytest a parse of its whole file to show the failure.

    Node ids and messages never hold the tree's own path (a test parametrized by a data
    file's absolute path): it is made relative, so runs of one test in different trees
    agree.

    ``tree`` may be a :class:`~bugbout.core.plumbing.trees.testtree.TestTree` whose edits are done:
    an overlay's edits are sealed, the canaries go into its upper directory and pytest runs
    where the overlay is mounted (a command that confines itself gets a plain copy).

    The options about the project's configuration suit the environment's pytest
    (:mod:`~bugbout.core.plumbing.environments.pytest_era`); a pytest too old for them is an
    :class:`~bugbout.core.contract.errors.EnvironmentFailure`.

    A tree whose ``setup.py`` declares ``use_2to3`` runs as a copy converted by ``2to3``,
    as its era's build converted it (:mod:`~bugbout.core.plumbing.environments.py2_tree`)."""
    era = pytest_era(environment)
    if not era.supported:
        raise EnvironmentFailure(era.unsupported())
    with converted(tree, confine) as copy:
        return _run_on(
            environment, copy if copy is not None else tree, targets, project=project,
            label=label, timeout=timeout, confine=confine, skip=skip, coverage=coverage,
            hostile=hostile,
        )  # fmt: skip


def _run_on(
    environment: Environment,
    tree: Path | TestTree,
    targets: list[str],
    *,
    project: ProjectSettings,
    label: str,
    timeout: float,
    confine: Confine,
    skip: frozenset[str],
    coverage: list[bytes] | None,
    hostile: bool,
) -> TestRun:
    """:func:`run_tests` on the tree as it is."""
    layered = _layered(environment, tree, confine)
    where = layered.tree if layered is not None else tree
    assert isinstance(where, Path)
    if layered is not None and layered.overlay is not None:
        _expose_first_target(layered, targets)
    planted = plant(
        layered.edits if layered is not None else where,
        targets,
        lower=layered.lower if layered is not None else None,
        expose=(lambda module: layered.expose([module])) if layered is not None else _no_op,
        twins=hostile,
        naming=naming(*collected_names(layered.locate if layered else where.joinpath, targets)),
    )
    try:
        run = _isolating_crashes(
            environment, where, targets, planted, project=project, label=label,
            timeout=timeout, confine=_entering(layered, confine), compiler=_sandboxed(confine),
            skip=skip, coverage=coverage,
        )  # fmt: skip
    finally:
        planted.remove()
    return relative_to_tree(run, where)


def _sandboxed(confine: Confine) -> Confine | None:
    """``confine`` when it runs commands in a sandbox, which then compiles the kept
    plugin code (:mod:`~bugbout.core.plumbing.testruns.plugin_code`); ``None`` when it
    does not (``sandbox=none``): such a run could write that code, so none is kept."""
    inner = confine.confine if isinstance(confine, HeldConfine) else confine
    return confine if isinstance(inner, SandboxConfine) else None


def _no_op(module: str) -> None:
    """Nothing to expose: a plain tree is edited where it lies."""


def _layered(environment: Environment, tree: Path | TestTree, confine: Confine) -> TestTree | None:
    """``tree`` sealed when it is a :class:`TestTree`; made a plain copy when it is an
    overlay and the command cannot run in the namespace that mounts it: the environment's
    command confines itself, or the sandbox sets up namespaces of its own (podman, which
    cannot mount its storage inside bugbout's user namespace)."""
    if not isinstance(tree, TestTree):
        return None
    tree.seal()
    if tree.overlay is not None and (
        environment.command([], tree.tree, []).contained or not runs_in_overlays(confine)
    ):
        tree.materialise()
    return tree


def _expose_first_target(tree: TestTree, targets: list[str]) -> None:
    """Expose targets until one holds the canaries, so they go where a copy has them."""
    for target in targets:
        tree.expose([target.split("::", 1)[0]])
        if canary_directory(tree.edits, [target]) is not None:
            return


def _entering(tree: TestTree | None, confine: Confine) -> Confine:
    """``confine``, run where ``tree``'s overlay is mounted when it has one (held to the
    same limits)."""
    overlay = tree.overlay if tree is not None else None
    if overlay is None:
        return confine
    return held_as(
        confine, lambda argv, where, writable: enter(overlay, confine(argv, where, writable))
    )


def relative_to_tree(run: TestRun, tree: Path) -> TestRun:
    """``run`` with every mention of ``tree``'s absolute path made relative to it."""
    paths = dict.fromkeys([str(tree), str(tree.resolve())])

    def relative(text: str) -> str:
        for path in paths:
            text = text.replace(f"{path}{os.sep}", "").replace(path, ".")
        return text

    return run.model_copy(
        update={
            "outcomes": {relative(name): outcome for name, outcome in run.outcomes.items()},
            "crashes": {relative(name): why for name, why in run.crashes.items()},
            "collection_errors": {
                relative(name): relative(message) for name, message in run.collection_errors.items()
            },
            "detail": relative(run.detail),
        }
    )


def _isolating_crashes(
    environment: Environment,
    tree: Path,
    targets: list[str],
    planted: Planted,
    *,
    project: ProjectSettings,
    label: str,
    timeout: float,
    confine: Confine,
    compiler: Confine | None,
    skip: frozenset[str],
    coverage: list[bytes] | None,
) -> TestRun:
    """pytest on ``targets``, again without each test that killed it, as :func:`run_tests`
    says; ``compiler`` compiles the kept plugin code (``None``: none is kept)."""
    crashes: dict[str, str] = {}
    twins: list[str] = []  # a twin that killed pytest failed, as it must: not the run's
    spent = 0.0
    while True:
        run, running, killed = _started(label, functools.partial(
            _pytest_process, environment, tree, targets, planted, project=project,
            label=label, timeout=timeout, confine=confine, compiler=compiler,
            deselect=[*crashes, *twins], skip=skip, coverage=coverage,
        ))  # fmt: skip
        spent += run.duration
        seen = running in crashes or running in twins
        if running is None or seen or run.status in _NOT_A_CRASH or stopping():
            running = None
            break
        if planted.holds(running):
            twins.append(running)
            continue
        crashes[running] = killed or f"crashed ({ending(run.exit_code)})"
        if len(crashes) > CRASH_LIMIT:
            break
    if crashes:
        run.crashes = crashes
        run.outcomes |= dict.fromkeys(crashes, Outcome.FAILED)
        run.failures |= crashes
        run.duration = round(spent, 3)
        if running is not None:  # more tests crashed than CRASH_LIMIT: the rest never ran
            run.status = RunStatus.CRASHED
        elif run.status == RunStatus.NO_TESTS:  # every other test was deselected
            run.status, run.detail = RunStatus.OK, ""
    return run


def ending(exit_code: int | None) -> str:
    """How a process ended, from its exit status: ``signal 11`` or ``exit code 3``."""
    number = killed_by(exit_code)
    return f"signal {number}" if number else f"exit code {exit_code}"


def killed_by(exit_code: int | None) -> int | None:
    """The signal that killed a process, from its exit status (a wrapper such as
    bubblewrap or podman reports a death by signal N as 128 + N)."""
    if exit_code is not None and exit_code < 0:
        return -exit_code
    if exit_code is not None and 128 < exit_code < 128 + signal.NSIG:
        return exit_code - 128
    return None


def _started(
    label: str, process: Callable[[], tuple[TestRun, str | None, str | None, str | None]]
) -> tuple[TestRun, str | None, str | None]:
    """``process`` (:func:`_pytest_process`), started again when it never started (the
    sandbox, the container runtime or the interpreter failed first:
    :mod:`bugbout.core.plumbing.testruns.unstarted`); :class:`TestRunNotStarted` when it never
    does."""
    pause = PAUSE
    for number in range(1, TRIES + 1):
        run, running, killed, why = process()
        if why is None:
            return run, running, killed
        if number == TRIES or stopping():
            break
        time.sleep(pause)
        pause *= 2
    raise TestRunNotStarted(
        f"the {label} test run never started ({why}; tried {number} times): the sandbox "
        "or the test environment failed, not the code under test"
    )


def _pytest_process(
    environment: Environment,
    tree: Path,
    targets: list[str],
    planted: Planted,
    *,
    project: ProjectSettings,
    label: str,
    timeout: float,
    confine: Confine,
    compiler: Confine | None,
    deselect: list[str],
    skip: frozenset[str],
    coverage: list[bytes] | None,
) -> tuple[TestRun, str | None, str | None, str | None]:
    """One pytest process without the tests ``deselect`` and ``skip`` name, the test it
    was running when it ended (``None`` when it ended between tests), why it was killed
    early (that test ran past the project's ``test-timeout``, or the run went past one
    of ``limits.tests``: the guard's breach), and why it never started (``None``: it
    did)."""
    key = secrets.token_hex(32)
    era = pytest_era(environment)
    tracing = ["-p", "bugbout_coverage"] if coverage is not None else []
    args = [
        "-p", "bugbout_outcomes", *tracing, "-p", "no:cacheprovider", *era.options(tree),
        "-q", *project.pytest_args, "--", *planted.targets(targets),
    ]  # fmt: skip
    plugin = outcomes_plugin_dir()
    command = environment.command(args, tree, [plugin])
    # A container the guard's kill left, or a bugbout killed with kill -9 (the next one
    # ends it, then removes the folders it left): kept where a crash does not remove it.
    leftovers = Leftovers.of_this_process(bugbout_home() / "leftovers")
    with (
        scratch_folder("guard") as private,
        tempfile.TemporaryFile() as outcomes,
        tempfile.TemporaryFile() as output,
        tempfile.TemporaryFile() as skipped,
        tempfile.TemporaryFile() as traced,
        scratch_folder("home") as home,
        sealed(plugin_code(command, plugin, bugbout_home(), compiler)) as code,
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
            "BUGBOUT_DESELECT": json.dumps(deselect),
            "BUGBOUT_SKIP_FD": str(skipped.fileno()),
            "BUGBOUT_SOURCE_DIRS": json.dumps(list(project.source)),
            "BUGBOUT_TESTS_DIR": project.tests,
            "BUGBOUT_IMPOSTORS": "1" if planted.lower is not None else "",  # read on edits only
            **era.variables(),
            VARIABLE: str(leftovers.path),
            CODE_VARIABLE: str(code) if code is not None else "",
        }
        if coverage is not None:
            env["BUGBOUT_COVERAGE_FD"] = str(traced.fileno())
        outcomes.write(key_line(key))
        outcomes.flush()
        skipped.write(json.dumps(sorted(skip)).encode())
        skipped.flush()
        started = time.monotonic()
        if command.contained:  # a container of its own: what it writes is handed over here
            for writable in (tree, Path(home)):
                hand_over(writable)
        argv = command.argv if command.contained else confine(command.argv, tree, (Path(home),))
        guard = run_guard(confine, (planted.tree, Path(home)), Path(private, "limits.json"))
        process = subprocess.Popen(
            guard.wrap(argv) if guard is not None else argv,
            cwd=command.cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            pass_fds=(
                outcomes.fileno(), skipped.fileno(), traced.fileno(),
                *(guard.fds if guard is not None else ()), *([code] if code is not None else []),
            ),
            start_new_session=True,
        )  # fmt: skip
        watch(process)  # a stopped bout kills its group
        leftovers.add_process(process.pid)
        exit_code, timed_out, hung = _wait(
            process, started + timeout, HangWatch(outcomes.fileno(), project.test_timeout)
        )
        leftovers.end()
        duration = time.monotonic() - started
        outcomes.seek(0)
        written = outcomes.read()
        stream = read_outcomes(written, key)
        output.seek(0)
        detail = output.read().decode("utf-8", "replace")[-DETAIL_LIMIT:]
        why = never_started(written, key_line(key), exit_code, detail)
        breach = guard.breach() if guard is not None else None
        if coverage is not None:
            traced.seek(0)
            coverage.append(traced.read(COVERAGE_LIMIT))
    run = summarise(stream.reports, label=label, exit_code=exit_code, duration=duration)
    if timed_out:
        run.status = RunStatus.TIMEOUT
    run = check_canaries(run, planted, stream, detail)
    if run.status == RunStatus.OK and not run.outcomes:
        run.status = RunStatus.COLLECTION_FAILED if run.collection_errors else RunStatus.NO_TESTS
    if breach is not None:  # the code under test's doing: killed, whatever pytest said
        run.status, run.detail = RunStatus.CRASHED, f"{breach}\n{detail}"
    elif timed_out:
        run.detail = f"killed after {timeout:g} s\n{detail}"
    elif run.status != RunStatus.OK:
        run.detail = detail
    hang = f"hung (still running after {project.test_timeout:g} s)" if hung else None
    return run, running_test(stream.reports), breach or hang, why


def _wait(
    process: subprocess.Popen[bytes], deadline: float, hangs: HangWatch
) -> tuple[int | None, bool, bool]:
    """Wait for pytest until ``deadline``, killing it early when one test hangs: its exit
    status (``None`` when killed at the deadline), whether it timed out, whether it hung."""
    while True:
        try:
            return (
                wait(process, min(POLL, max(deadline - time.monotonic(), 0))),
                False,
                False,
            )
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                kill_group(process)
                return None, True, False
            if hangs.hung() is not None:
                kill_group(process)
                return process.wait(), False, True
