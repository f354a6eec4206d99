"""Ground truth: the maintainers' tests, run before and after their fix.

*Before* is the parent tree with the fix's versions of every test file it changed (the
ones it deleted removed); *after* is the fix tree. Each is run ``reruns`` times.

- fail-to-pass: failed or errored in every before run (or absent because its module
  failed to collect) and passed in every after run;
- pass-to-pass: passed in every run;
- unstable: its outcome, or whether it ran at all, differs between the runs of one tree
  (a test flaky before the fix is not fixed by it);
- fail-on-base: failed or errored in every run.

A test that kills pytest (a segfault) is failed in that run, the others run without it.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from bugbout.core.contract.errors import EnvironmentFailure
from bugbout.core.contract.settings import ProjectSettings, TasksSettings
from bugbout.core.plumbing.confinement.confine import Confine
from bugbout.core.plumbing.environments import repair
from bugbout.core.plumbing.environments.environment import (
    Environment,
    EnvironmentBuilder,
    EnvironmentRequest,
    lacking,
    resolved,
    revision,
    same_environment,
)
from bugbout.core.plumbing.project.project_metadata import declared_test_dependencies
from bugbout.core.plumbing.testruns.test_runner import TestRunner, TestRunRequest
from bugbout.core.plumbing.testruns.testrun import CRASH_LIMIT, ending, killed_by
from bugbout.core.plumbing.trees.built_files import export_built
from bugbout.core.plumbing.trees.checkout import remove_later
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.plumbing.trees.tree_diff import Differing, differing
from bugbout.core.plumbing.trees.tree_files import install_fix_tests
from bugbout.core.plumbing.trees.tree_turn import Snapshot, exact, snapshot, turn
from bugbout.core.store.records import AddedDependency, Oracle, Outcome, RunStatus, Task, TestRun
from bugbout.core.truth.local_time import ZoneRerun, local_time_note
from bugbout.core.truth.merges import merge_note
from bugbout.core.truth.moves import moved_note
from bugbout.core.truth.no_fail_to_pass import FAILING, no_fail_to_pass_reason, passed
from bugbout.core.truth.python2 import python2_note, stdlib_note
from bugbout.core.truth.setup_cache import cached_setup_py
from bugbout.core.truth.setup_run import executed_setup_py
from bugbout.core.truth.unreachable import unreachable_note

BROKEN_BEFORE = (RunStatus.TIMEOUT, RunStatus.CRASHED, RunStatus.TAMPERED)
"""A before run that ended so is no evidence (one that cannot collect a module is: the
new tests often import what only the fix adds)."""
BROKEN_RUN = (*BROKEN_BEFORE, RunStatus.COLLECTION_FAILED)
SETUP_CACHE = "setup-py"
"""Where in ``BUGBOUT_HOME`` what a ``setup.py`` declared when it ran is kept."""


def export_before(git: Git, task: Task, destination: Path) -> None:
    """The code just before the fix, with the fix's versions of its test files."""
    export_built(git, task.parent, destination)
    install_fix_tests(task, git, destination)


def compute_oracle(
    task: Task,
    *,
    git: Git,
    builder: EnvironmentBuilder,
    runner: TestRunner,
    project: ProjectSettings,
    tasks: TasksSettings,
    home: Path,
    key: str,
    confine: Confine,
    stored: Oracle | None = None,
) -> Oracle:
    """Run the fix's test modules before and after the fix with ``runner`` and classify
    every test, as ``project`` and ``tasks`` (its settings sections) say; or, when
    ``stored`` (an oracle ``builder`` made under another revision) ran in the environment
    the task resolves to now, keep it.

    Both runs happen in one directory (and name it relatively: see
    :meth:`bugbout.core.plumbing.testruns.test_runner.TestRunner.run`), so their test ids agree.
    When a run misses a module the tests import (and ``tasks.repair-imports`` is on), its
    distribution is added to the environment and the runs are made again (a few rounds:
    an added module may import another). Test
    dependencies that only running ``setup.py`` reveals are added from the start."""
    work = home / "work"
    work.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f"{task.id}-", dir=work))
    try:
        tree = scratch / "tree"
        export_built(git, task.sha, tree.with_name("after"))
        exported: Snapshot | None = snapshot(tree.with_name("after"))  # setup.py may write
        if stored is not None and (
            kept := _still(stored, task, builder=builder, project=project, home=home, tree=tree)
        ):
            return kept.model_copy(update={"key": key})
        declared = computed_test_dependencies(
            tree.with_name("after"), confine, cache=home / SETUP_CACHE
        )
        installed, repaired = repair.with_added(project, declared), list[AddedDependency]()
        rounds = 0
        while True:
            runs, environment = _run_all(
                task,
                git=git,
                builder=builder,
                runner=runner,
                project=project,
                installed=installed,
                tasks=tasks,
                home=home,
                tree=tree,
                confine=confine,
                exported=exported,
            )
            exported = None  # the after tree was used: a next round exports it again
            if isinstance(environment, str):
                if repaired:
                    environment += (
                        f" (after adding {', '.join(a.requirement for a in repaired)} for the "
                        f"tests' imports; {repair.SETTING}=false leaves it out)"
                    )
                return Oracle(
                    task_id=task.id, key=key, status="environment-error", reason=environment
                )
            suite = runner.suite_paths(tree, installed.tests, task.test_files)
            missing = repair.missing_imports(runs, tree, installed, suite)
            more = repair.next_round(missing, repaired, rounds)
            if not more or not tasks.repair_imports:
                break
            rounds += 1
            repaired += more
            installed = repair.with_added(installed, repaired)
    finally:
        remove_later(scratch)
    oracle = judge_runs(task, runs, key=key, environment=environment.description)
    oracle.added = declared + repaired
    oracle.suite = list(suite) if suite != (installed.tests,) else []
    oracle.versions, oracle.exempt = resolved(environment)
    oracle.environment_key, oracle.revision = environment.key, revision(builder)
    if oracle.reason is not None and missing:
        oracle.reason += repair.unrepaired(missing, repaired, tasks.repair_imports)
    if oracle.status == "no-fail-to-pass" and oracle.reason is not None:
        rerun = ZoneRerun(
            git=git, task=task, environment=environment, runner=runner, project=project,
            timeout=tasks.timeout, confine=confine, work=work,
        )  # fmt: skip
        if project_own := unreachable_note(git, task, runs[0]) or local_time_note(
            git, task, runs[0], rerun
        ):
            oracle.reason += project_own  # not the environment's doing
            return oracle
        oracle.reason += python2_note(git, task)
        if passed(task, runs[0]):
            oracle.reason += moved_note(git, task) + merge_note(git, task)
    if oracle.reason is not None:
        oracle.reason += lacking(environment)
    return oracle


def _still(
    stored: Oracle,
    task: Task,
    *,
    builder: EnvironmentBuilder,
    project: ProjectSettings,
    home: Path,
    tree: Path,
) -> Oracle | None:
    """``stored``, when the environment ``task`` resolves to now (with the dependencies
    it added) is the one it ran in; its revision is then the builder's."""
    project = repair.with_added(project, stored.added)
    request = EnvironmentRequest(
        project=project, tree=tree.with_name("after"), date=task.date, home=home
    )
    try:
        environment = builder.build(request)
    except EnvironmentFailure:
        return None
    if not same_environment(stored, environment):
        return None
    return stored.model_copy(
        update={"environment_key": environment.key, "revision": revision(builder)}
    )


def computed_test_dependencies(
    tree: Path, confine: Confine, *, cache: Path | None = None
) -> list[AddedDependency]:
    """The test dependencies ``setup.py`` declares only when it runs (extras built by
    code), found by running it confined (or, with ``cache``, kept from a run that read
    the same: :mod:`bugbout.core.truth.setup_cache`), beyond what reading the tree finds."""
    if not (tree / "setup.py").is_file():
        return []
    if cache is not None:
        executed = cached_setup_py(tree, confine, cache)
    else:
        executed = executed_setup_py(tree, confine)
    if executed is None:
        return []
    read = {r.lower() for r in declared_test_dependencies(tree)}
    return [
        AddedDependency(requirement=requirement, declared_by="setup.py")
        for requirement in declared_test_dependencies(tree, executed)
        if requirement.lower() not in read
    ]


def _run_all(
    task: Task,
    *,
    git: Git,
    builder: EnvironmentBuilder,
    runner: TestRunner,
    project: ProjectSettings,
    installed: ProjectSettings,
    tasks: TasksSettings,
    home: Path,
    tree: Path,
    confine: Confine,
    exported: Snapshot | None,
) -> tuple[list[TestRun], Environment | str]:
    """The before runs and the after runs, all in ``tree``, with the environment they ran
    in (``installed``: the project with the test dependencies added); or why the
    environment could not be built. ``exported``: the after tree as it was exported, when
    it is already there."""
    after = tree.with_name("after")
    if not after.exists():
        export_built(git, task.sha, after)
        exported = snapshot(after)
    try:
        environment = builder.build(
            EnvironmentRequest(project=installed, tree=after, date=task.date, home=home)
        )
    except EnvironmentFailure as exc:
        return [], str(exc)
    work = home / "work"  # trees removed later go there, out of the scratch folder
    remove_later(tree, work)
    turned = _before_from_after(git, task, after, tree, exported)
    runs = []
    for side in ("before", "after"):
        if side == "after" and not (turned is not None and _after_again(git, task, tree, *turned)):
            remove_later(tree, work)
            if after.exists():  # the after tree takes the before tree's place: no copy
                after.rename(tree)
            else:  # the before runs wrote in the tree they shared with it
                export_built(git, task.sha, tree)
        for number in range(1, tasks.reruns + 1):
            label = f"{side}-{number}"
            try:
                request = TestRunRequest(
                    environment=environment,
                    tree=tree,
                    targets=tuple(task.test_files),
                    project=project,
                    label=label,
                    timeout=tasks.timeout,
                    confine=confine,
                    hostile=False,  # the maintainers' code, before and after their fix
                )
                runs.append(runner.run(request))
            except EnvironmentFailure as exc:  # its test runner is too old to run
                return [], str(exc)
    return runs, environment


def _before_from_after(
    git: Git, task: Task, after: Path, tree: Path, exported: Snapshot | None
) -> tuple[list[Differing], Snapshot] | None:
    """The before tree at ``tree``, made from the export ``after`` in place where that is
    exact (:mod:`~bugbout.core.plumbing.trees.tree_turn`) and ``after`` is still as it was
    exported (``exported``: running ``setup.py`` or building the environment may write in
    it, from the fixed code): the changes it was turned by and what it holds; else
    exported (``None``, ``after`` left as it is)."""
    changes = differing(git, task.parent, task.sha)
    named = {os.fsdecode(change.path) for change in changes}
    fix_tests = {*task.changed_test_files, *task.deleted_test_files}
    untouched = exported is not None and snapshot(after) == exported
    if not untouched or not exact(changes, after) or not fix_tests <= named:  # fix's own too
        export_before(git, task, tree)
        return None
    after.rename(tree)
    turn(git, tree, task.parent, changes, old=True)
    install_fix_tests(task, git, tree)
    return changes, snapshot(tree)


def _after_again(
    git: Git, task: Task, tree: Path, changes: list[Differing], before: Snapshot
) -> bool:
    """The before tree ``tree`` turned back into the after tree, when its runs left it as
    ``before`` says it was; ``False`` (nothing done) when they did not."""
    if snapshot(tree) != before:
        return False
    turn(git, tree, task.sha, changes, old=False)
    return True


def judge_runs(task: Task, runs: list[TestRun], *, key: str = "", environment: str = "") -> Oracle:
    """Classify every test from the before runs (first: those labelled ``before``, at
    least one) and the after runs (the rest)."""
    split = next((n for n, run in enumerate(runs) if not run.label.startswith("before")), len(runs))
    befores, afters = runs[: max(split, 1)], runs[max(split, 1) :]
    befores = [_helpers_need_the_fix(run, task, afters) for run in befores]
    oracle = Oracle(task_id=task.id, key=key, status="ok", environment=environment, runs=runs)
    broken = [run for run in befores if run.status in BROKEN_BEFORE]
    broken += [run for run in afters if run.status in BROKEN_RUN]
    broken += [run for run in runs if run.status == RunStatus.NO_TESTS]  # never evidence
    if broken:
        oracle.status = "environment-error"
        oracle.reason = f"the {broken[0].label} run {_describe_failure(broken[0])}"
        return oracle
    names = set().union(*(run.outcomes for run in afters))
    for name in sorted(names):
        seen = {run.outcomes.get(name) for run in afters}
        previous = {_before(run, name) for run in befores}
        if len(seen) > 1 or len(previous) > 1:
            oracle.unstable.append(name)
            continue
        [after], [before] = seen, previous
        if after == Outcome.PASSED and before in FAILING:
            oracle.fail_to_pass.append(name)
        elif after == Outcome.PASSED and before == Outcome.PASSED:
            oracle.pass_to_pass.append(name)
        elif after in FAILING and before in FAILING:
            oracle.fail_on_base.append(name)
    if task.modified_tests and not task.added_tests and not _proves(oracle, task):
        oracle.status = "no-fail-to-pass"
        oracle.reason = (
            "the fix only changed existing tests, and none of them failed before it and "
            f"passed after it ({', '.join(task.modified_tests[:3])})"
        )
    elif not oracle.fail_to_pass:
        oracle.status = "no-fail-to-pass"
        last = afters[0] if afters else befores[0]
        oracle.reason = no_fail_to_pass_reason(task, befores[0], last)
    return oracle


def _helpers_need_the_fix(run: TestRun, task: Task, afters: list[TestRun]) -> TestRun:
    """A before run that stopped before any test because a test file the fix changed (a
    ``conftest.py``, a helper one imports) cannot load without the fix, while the after
    runs ran: as a run in which no test module could be collected, as none can start."""
    if run.status != RunStatus.CRASHED or run.crashes or killed_by(run.exit_code):
        return run
    if not afters or any(after.status != RunStatus.OK for after in afters):
        return run
    named = [path for path in task.changed_test_files if path in run.detail]
    if not named:
        return run
    why = f"{named[0]}, changed by the fix, needs it: {first_error(run.detail)}"
    modules = {_module(name) for after in afters for name in after.outcomes}
    return run.model_copy(
        update={"status": RunStatus.OK, "collection_errors": dict.fromkeys(sorted(modules), why)}
    )


def _before(run: TestRun, name: str) -> Outcome | None:
    """``name``'s outcome in a before run: ``error`` when its module failed to collect."""
    found = run.outcomes.get(name)
    if found is None and _module(name) in run.collection_errors:
        return Outcome.ERROR
    return found


def _proves(oracle: Oracle, task: Task) -> bool:
    """Whether a fail-to-pass test is one of the task's modified tests (or a case of one)."""
    changed = set(task.modified_tests)
    for name in oracle.fail_to_pass:
        module, _, test = name.rpartition("::")
        if f"{module}::{test.split('[', 1)[0]}" in changed:
            return True
    return False


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def _describe_failure(run: TestRun) -> str:
    if run.status == RunStatus.TIMEOUT:
        return (
            "timed out: the whole run took longer than tasks.timeout, with no one test "
            "past project.test-timeout (raise tasks.timeout if the suite is just slow)"
        )
    if run.status == RunStatus.TAMPERED and (error := _unimportable(run)):
        why = _unbuilt_module(error) or stdlib_note(error)
        return f"could not import the code under test: {error}{why}"
    if run.status == RunStatus.TAMPERED:
        reason = run.tampering[0] if run.tampering else "its outcomes cannot be trusted"
        return f"was tampered with ({reason}): the project's own test setup defeats the canaries"
    if run.status == RunStatus.COLLECTION_FAILED:
        module, message = next(iter(run.collection_errors.items()), ("", ""))
        why = _unbuilt_module(message) or stdlib_note(message, run.detail)
        return f"could not collect any test ({module}: {message}){why}"
    if run.status == RunStatus.NO_TESTS and run.skipped_modules:
        module, message = next(iter(run.skipped_modules.items()))
        return f"ran no test: {module} was skipped as a whole ({message or 'no reason given'})"
    if run.status == RunStatus.NO_TESTS:
        return f"ran no test: {first_error(run.detail) or 'pytest collected none'}"
    if len(run.crashes) > CRASH_LIMIT:
        tests = ", ".join(list(run.crashes)[:3])
        return f"crashed: {len(run.crashes)} tests killed pytest, more than {CRASH_LIMIT} ({tests})"
    if killed_by(run.exit_code):  # the end of its output is a stack dump: not a reason
        return f"crashed ({ending(run.exit_code)}) while no test was running (see its detail)"
    return f"crashed ({ending(run.exit_code)}): {first_error(run.detail) or 'no output'}"


_UNCOLLECTED_CANARY = re.compile(
    r"^canary \S+ could not be collected \((?P<error>[\w.]*(?:Error|DistributionNotFound)\b.*)\)$"
)
_OWN_MODULE = re.compile(r"No module named '(?P<top>\w+)\.[\w.]+' \((?:[\w.-]+/)*(?P=top)/")
"""A module of a package, missing when a file of that package imports it."""


def _unimportable(run: TestRun) -> str:
    """The error a tampered run's canaries could not be collected with, when that is all
    it says: the code under test cannot be imported, no canary can run (empty otherwise)."""
    errors = [found["error"] for found in map(_UNCOLLECTED_CANARY.match, run.tampering) if found]
    return errors[0] if errors and len(errors) == len(run.tampering) else ""


def _unbuilt_module(error: str) -> str:
    """What a reason adds when the module the package cannot import is one of its own."""
    if not _OWN_MODULE.search(error):
        return ""
    return (
        ", a module of the project that git does not hold: its build writes it, and its "
        "setup.py, setup.cfg or pyproject.toml does not name it as vcversioner's or "
        "setuptools-scm's version module, which bugbout writes"
    )


_ERROR_LINE = re.compile(r"^(?:E\s+)?(?P<error>(?:[\w.]*(?:Error|Exception)\b|ERROR:|error:).*)")
_USAGE_ERROR = re.compile(r"^[\w.-]+(?: -m [\w.]+)?: (?P<error>error: .*)")
"""argparse's line that says what was wrong with the command line (``pytest: error:
unrecognized arguments: --rootdir``; newer pytests name themselves ``python -m pytest``),
after its ``usage:`` line."""


def first_error(detail: str) -> str:
    """The line of pytest's output that says what was wrong with its command line
    (``error: unrecognized arguments: --rootdir``), else the first that names an error
    (``ModuleNotFoundError: No module named 'simplejson'``), else its last line."""
    lines = [line.strip() for line in detail.strip().splitlines() if line.strip()]
    for line in lines:
        if found := _USAGE_ERROR.match(line):
            return found["error"][:300]
    for line in lines:
        if found := _ERROR_LINE.match(line):
            return found["error"][:300]
    return lines[-1][:300] if lines else ""
