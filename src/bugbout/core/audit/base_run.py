"""A task's base run.

The base run is the audit's gate on the unfixed code (the repository's tests at the
task's commit and the fix's test files), made once per task with the runner's coverage
map when ``verdicts.tests`` is ``affected``: its outcomes are every audit's baseline,
and its map selects each patch's tests
(:func:`bugbout.core.plumbing.selection.affected.selections`). It runs on a fresh copy of the
unfixed code that holds nothing an agent wrote.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from bugbout.core.audit.audit_gate import gate_targets
from bugbout.core.audit.auditing import BASELINE_LABEL
from bugbout.core.plumbing.bench import Bench
from bugbout.core.plumbing.selection.affected import BaseRun, read_coverage
from bugbout.core.plumbing.trees.testtree import fresh_test_tree
from bugbout.core.plumbing.trees.tree_files import install_fix_tests
from bugbout.core.store.records import Task


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
