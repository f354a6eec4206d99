"""Ground truth: the maintainers' tests, run before and after their fix.

*Before* is the parent tree with the fix's versions of every test file it changed (the
ones it deleted removed); *after* is the fix tree, run ``reruns`` times.

- fail-to-pass: failed or errored before (or absent because its module failed to
  collect) and passed in every after run;
- pass-to-pass: passed before and in every after run;
- unstable: its outcome, or whether it ran at all, differs between after runs;
- fail-on-base: failed or errored before and in every after run.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from bugbout.core.confine import Confine
from bugbout.core.crossexam import install_file
from bugbout.core.environment import Environment, EnvironmentBuilder, EnvironmentRequest
from bugbout.core.errors import EnvironmentFailure
from bugbout.core.git import Git
from bugbout.core.records import Oracle, Outcome, RunStatus, Task, TestRun
from bugbout.core.settings import BoutSettings
from bugbout.core.testrun import run_tests

FAILING = (Outcome.FAILED, Outcome.ERROR)
BROKEN_RUN = (
    RunStatus.TIMEOUT,
    RunStatus.CRASHED,
    RunStatus.COLLECTION_FAILED,
    RunStatus.TAMPERED,
)


def export_before(git: Git, task: Task, destination: Path) -> None:
    """The code just before the fix, with the fix's versions of its test files."""
    git.export(task.parent, destination)
    install_fix_tests(task, git, destination)


def install_fix_tests(task: Task, git: Git, tree: Path) -> None:
    """Put the fix's versions of the test files it changed into ``tree`` and remove the
    ones it deleted; a path through a symlink (a patch may have put one there) is never
    followed."""
    for path in task.deleted_test_files:
        install_file(tree, path, None)
    for path in task.changed_test_files:
        found = git.blob(task.sha, path)
        if found is not None:
            install_file(tree, path, found[1])


def compute_oracle(
    task: Task,
    *,
    git: Git,
    builder: EnvironmentBuilder,
    settings: BoutSettings,
    home: Path,
    key: str,
    confine: Confine,
) -> Oracle:
    """Run the fix's test modules before and after the fix and classify every test."""
    work = home / "work"
    work.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"{task.id}-", dir=work) as scratch:
        after_tree, before_tree = Path(scratch) / "after", Path(scratch) / "before"
        git.export(task.sha, after_tree)
        try:
            environment = builder.build(
                EnvironmentRequest(
                    project=settings.project, tree=after_tree, date=task.date, home=home
                )
            )
        except EnvironmentFailure as exc:
            return Oracle(task_id=task.id, key=key, status="environment-error", reason=str(exc))
        export_before(git, task, before_tree)
        runs = [_run(environment, before_tree, task, settings, label="before", confine=confine)]
        for number in range(1, settings.tasks.reruns + 1):
            label = f"after-{number}"
            runs.append(_run(environment, after_tree, task, settings, label=label, confine=confine))
        shutil.rmtree(scratch, ignore_errors=True)
    return judge_runs(task, runs, key=key, environment=environment.description)


def _run(
    environment: Environment,
    tree: Path,
    task: Task,
    settings: BoutSettings,
    *,
    label: str,
    confine: Confine,
) -> TestRun:
    return run_tests(
        environment,
        tree,
        task.test_files,
        project=settings.project,
        label=label,
        timeout=settings.tasks.timeout,
        confine=confine,
    )


def judge_runs(task: Task, runs: list[TestRun], *, key: str = "", environment: str = "") -> Oracle:
    """Classify every test from the before run (first) and the after runs (the rest)."""
    before, afters = runs[0], runs[1:]
    oracle = Oracle(task_id=task.id, key=key, status="ok", environment=environment, runs=runs)
    broken = [run for run in runs if run.status in BROKEN_RUN and run is not before]
    if before.status in (RunStatus.TIMEOUT, RunStatus.CRASHED, RunStatus.TAMPERED):
        broken.insert(0, before)
    if broken:
        oracle.status = "environment-error"
        oracle.reason = f"the {broken[0].label} run {_describe_failure(broken[0])}"
        return oracle
    names = set().union(*(run.outcomes for run in afters))
    for name in sorted(names):
        seen = [run.outcomes.get(name) for run in afters]
        if len(set(seen)) > 1:
            oracle.unstable.append(name)
            continue
        after = seen[0]
        previous = before.outcomes.get(name)
        if previous is None and _module(name) in before.collection_errors:
            previous = Outcome.ERROR
        if after == Outcome.PASSED and previous in FAILING:
            oracle.fail_to_pass.append(name)
        elif after == Outcome.PASSED and previous == Outcome.PASSED:
            oracle.pass_to_pass.append(name)
        elif after in FAILING and previous in FAILING:
            oracle.fail_on_base.append(name)
    if not oracle.fail_to_pass:
        oracle.status = "no-fail-to-pass"
        oracle.reason = "no test failed before the fix and passed after it"
    return oracle


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def _describe_failure(run: TestRun) -> str:
    if run.status == RunStatus.TIMEOUT:
        return "timed out (raise tasks.timeout if the tests are just slow)"
    if run.status == RunStatus.TAMPERED:
        reason = run.tampering[0] if run.tampering else "its outcomes cannot be trusted"
        return f"was tampered with ({reason}): the project's own test setup defeats the canaries"
    if run.status == RunStatus.COLLECTION_FAILED:
        module, message = next(iter(run.collection_errors.items()), ("", ""))
        return f"could not collect any test ({module}: {message})"
    last = (run.detail.strip().splitlines() or ["no output"])[-1]
    return f"crashed with exit code {run.exit_code}: {last}"
