"""Scoring: a patch against the maintainers' hidden tests.

The tree is a fresh copy of the parent commit with only the patch's *source* changes (its
test edits and other files are left out), then the fix's versions of every test file the
fix changed (those it deleted removed), exactly as the oracle's *before* tree; the task's
test modules run in one pytest process. Against the oracle:

- ``resolved``: all fail-to-pass tests pass, and all pass-to-pass tests still pass;
- ``fixed-but-broke``: all fail-to-pass tests pass, but a pass-to-pass test no longer does;
- ``wrong-fix``: a fail-to-pass test does not pass, or the patch does not apply (its run is
  then ``crashed``, and its detail says why);
- ``no-fix``: no attempt, or one that changed no source;
- ``tampered``: the run was tampered with (a canary, the outcome stream, pytest changed
  under the tests) or the patch's source does what a fix has no reason to
  (:mod:`bugbout.core.plumbing.tampering.tamper`): never resolved, whatever its outcomes.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from bugbout.core.plumbing.bench import Bench
from bugbout.core.plumbing.tampering.tamper import flag
from bugbout.core.plumbing.trees.patch import PatchError, apply_patch
from bugbout.core.plumbing.trees.testtree import fresh_test_tree
from bugbout.core.plumbing.trees.tree_files import install_fix_tests
from bugbout.core.store.race_records import Attempt, ChangeArea, Score
from bugbout.core.store.records import Oracle, Outcome, RunStatus, Task, TestRun
from bugbout.core.store.verdict_records import PatchResolution


def score(
    task: Task,
    oracle: Oracle,
    attempt: Attempt | None,
    bench: Bench,
    *,
    contestant: str | None = None,
) -> PatchResolution:
    """Score ``attempt``'s patch on ``task`` against ``oracle``.

    ``contestant`` names the resolution (by default the attempt's contestant; ``""`` when
    there is no attempt, as for a judge's abstention). The oracle must be ``ok``: a task
    without ground truth cannot be scored.
    """
    name = contestant if contestant is not None else attempt.contestant if attempt else ""
    if oracle.task_id != task.id:
        raise ValueError(f"the oracle is for task {oracle.task_id}, not {task.id}")
    if oracle.status != "ok":
        raise ValueError(f"task {task.id} has no ground truth to score against ({oracle.status})")
    if attempt is not None and attempt.task_id != task.id:
        raise ValueError(f"attempt {attempt.contestant!r} is for task {attempt.task_id}")
    if attempt is None or not attempt.patch.source.strip():
        key = attempt.key if attempt is not None else ""
        return PatchResolution(task_id=task.id, contestant=name, key=key, score=Score.NO_FIX)
    checkouts = bench.checkouts
    work = checkouts.cache_dir / "work"
    work.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f"score-{task.id}-", dir=work))
    try:
        tree = fresh_test_tree(checkouts, task.parent, scratch / "tree")
        try:
            apply_patch(tree, attempt.patch.source)
            install_fix_tests(task, bench.git, tree)
        except PatchError as exc:
            run = TestRun(label=name, status=RunStatus.CRASHED, detail=str(exc))
        else:
            changes = attempt.patch.area(ChangeArea.SOURCE)
            findings = bench.runner.suspicious(tree.edits, tree.lower, changes)
            run = flag(bench.run(tree, task.test_files, label=name), findings)
    finally:
        checkouts.remove(scratch)
    return judge_run(task, oracle, run, contestant=name).model_copy(update={"key": attempt.key})


def judge_run(task: Task, oracle: Oracle, run: TestRun, *, contestant: str) -> PatchResolution:
    """The score of one run of the task's tests on a patched tree."""
    fail_to_pass = {test: _outcome(run, test) for test in oracle.fail_to_pass}
    failing = [test for test in oracle.pass_to_pass if _outcome(run, test) != Outcome.PASSED]
    if run.status == RunStatus.CRASHED and run.exit_code is None:
        failing = []  # pytest never started (the patch did not apply): nothing is known
    if run.status == RunStatus.TAMPERED:
        verdict = Score.TAMPERED
    elif all(outcome == Outcome.PASSED for outcome in fail_to_pass.values()):
        verdict = Score.FIXED_BUT_BROKE if failing else Score.RESOLVED
    else:
        verdict = Score.WRONG_FIX
    return PatchResolution(
        task_id=task.id,
        contestant=contestant,
        score=verdict,
        fail_to_pass=fail_to_pass,
        pass_to_pass_failing=failing,
        run=run,
    )


def _outcome(run: TestRun, test: str) -> Outcome | None:
    """A test's outcome in ``run``: ``error`` when its module failed to collect, ``None``
    when it did not run at all."""
    found = run.outcomes.get(test)
    if found is None and test.split("::", 1)[0] in run.collection_errors:
        return Outcome.ERROR
    return found
