"""A task's base run, and the tests each patch of the task runs in the verdict stages.

The base run is the audit's gate on the unfixed code (the repository's tests at the
task's commit and the fix's test files), made once per task with the runner's coverage
map when ``verdicts.tests`` is ``affected``: its outcomes are every audit's baseline,
and its map selects each patch's tests (:mod:`bugbout.core.crossexam.affected`). It runs
on a fresh copy of the unfixed code that holds nothing an agent wrote.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from bugbout.core.audit.audit_gate import gate_targets
from bugbout.core.audit.auditing import BASELINE_LABEL
from bugbout.core.crossexam.affected import (
    BaseRun,
    Selection,
    changed_in_functions,
    read_coverage,
    select,
)
from bugbout.core.plumbing.bench import Bench
from bugbout.core.plumbing.test_runner import TestRunner
from bugbout.core.plumbing.testtree import fresh_test_tree
from bugbout.core.store.records import Attempt, ChangeArea, Oracle, Task
from bugbout.core.truth.oracle import install_fix_tests


def run_base(task: Task, bench: Bench, *, coverage: bool) -> BaseRun:
    """The gate on the unfixed code, with the coverage map when ``coverage``."""
    checkouts = bench.checkouts
    root = checkouts.cache_dir / "audits"
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"{task.id}-base-", dir=root) as scratch:
        tree = fresh_test_tree(checkouts, task.parent, Path(scratch) / "tree")
        try:
            install_fix_tests(task, bench.git, tree)
            targets = gate_targets(
                task, bench.suite, hidden=True, examiners=(), runner=bench.runner
            )
            request = bench.request(tree, targets, label=BASELINE_LABEL)
            chunks: list[bytes] | None = None
            if coverage:
                run, chunks = bench.runner.run_with_coverage(request)
            else:
                run = bench.runner.run(request)
        finally:
            checkouts.remove(Path(scratch) / "tree")
    return BaseRun(task_id=task.id, run=run, coverage=read_coverage(chunks or []))


def selections(
    base: BaseRun,
    oracle: Oracle,
    attempts: Sequence[Attempt],
    *,
    base_tree: Path,
    suite: tuple[str, ...],
    runner: TestRunner,
) -> dict[str, Selection]:
    """Each attempt's selection of the repository's tests, by contestant: what its
    source changes can affect (the ``runner`` says which functions they lie in), and
    every test unstable or failing on the unfixed code."""
    always = [*oracle.unstable, *oracle.fail_on_base]
    found = {}
    for attempt in attempts:
        if not attempt.patch.source.strip():
            continue  # the unfixed code again: its gate is the baseline
        changes = attempt.patch.area(ChangeArea.SOURCE)
        scope = changed_in_functions(base_tree, attempt.patch.source, changes, runner)
        found[attempt.contestant] = select(base, scope, suite=suite, always=always)
    return found
