"""Running an audit's gate: the fix's tests and the chosen suite tests against a patch
(the gate) and, once per task, against the unfixed code (the baseline), in a working
copy of their own. :mod:`bugbout.core.audit.auditing` classifies what they show."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from bugbout.core.audit.auditing import BASELINE_LABEL, GATE_LABEL, is_empty
from bugbout.core.plumbing.bench import Bench
from bugbout.core.plumbing.selection.affected import Selection, restrict
from bugbout.core.plumbing.tampering.tamper import flag
from bugbout.core.plumbing.testruns.test_runner import TestRunner, file_of
from bugbout.core.plumbing.trees.patch import apply_patch
from bugbout.core.plumbing.trees.testtree import fresh_test_tree
from bugbout.core.plumbing.trees.tree_files import install_fix_tests
from bugbout.core.store.race_records import Attempt, ChangeArea, ChangeKind, FileChange
from bugbout.core.store.records import Task, TestRun


def run_gate(
    task: Task,
    attempt: Attempt,
    bench: Bench,
    *,
    tests: Sequence[str],
    hidden: bool = True,
    examiners: Sequence[Attempt] = (),
    baseline: TestRun | None = None,
    scratch: Path | None = None,
    selection: Selection | None = None,
) -> tuple[TestRun, TestRun]:
    """Run the gate with the patch and on the unfixed code: ``(gate, baseline)``.

    The gate runs ``tests`` (the repository's test paths), with, for a ``hidden`` audit,
    the fix's versions of its test files installed (the ones it deleted removed), and the
    ``examiners``' tests applied. It runs on two fresh copies of ``task.parent`` made
    under ``scratch`` (by default ``<checkouts cache>/audits``) and removed afterwards:
    one with only the patch's source changes applied, one without (the baseline). No
    other tree is read or written: not the cached tree, not the attempt's working copy.

    ``baseline`` reuses a baseline already captured for the same task and gate; with a
    patch that changes no source file the patched tree is the unfixed tree, so the gate
    run is the baseline's. A patch that does not apply raises ``PatchError``.

    A ``selection`` of the repository's tests (:mod:`bugbout.core.plumbing.selection.affected`) runs
    in place of ``tests``, the fix's and the examiners' test modules whole; the baseline
    returned holds the outcomes of the same tests.
    """
    runner = bench.runner
    targets = gate_targets(task, tests, hidden=hidden, examiners=examiners, runner=runner)
    if selection is not None and not selection.everything:
        whole = gate_targets(task, [], hidden=hidden, examiners=examiners, runner=runner)
        skip = frozenset(t for t in selection.skip if file_of(t) not in whole)
        selection = Selection(tuple(dict.fromkeys([*selection.targets, *whole])), skip)
        targets = list(selection.targets)
    if baseline is not None and selection is not None:
        baseline = restrict(baseline, selection)
    if baseline is not None and is_empty(attempt):
        return baseline.model_copy(update={"label": GATE_LABEL}), baseline
    root = scratch if scratch is not None else bench.checkouts.cache_dir / "audits"
    root.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=f"{task.id}-", dir=root))
    run = _GateRunner(
        task=task,
        bench=bench,
        hidden=hidden,
        examiners=examiners,
        folder=folder,
        targets=targets,
        skip=selection.skip if selection is not None else frozenset(),
    )
    try:
        if baseline is None:
            baseline = run(BASELINE_LABEL, "")
        if is_empty(attempt):
            gate = baseline.model_copy(update={"label": GATE_LABEL})
        else:
            gate = run(GATE_LABEL, attempt.patch.source, attempt.patch.area(ChangeArea.SOURCE))
    finally:
        bench.checkouts.remove(folder)
    return gate, baseline


@dataclass(frozen=True)
class _GateRunner:
    """Runs the gate on trees it makes, each a fresh copy of the unfixed code."""

    task: Task
    bench: Bench
    hidden: bool
    examiners: Sequence[Attempt]
    folder: Path
    targets: list[str]
    skip: frozenset[str] = frozenset()

    def __call__(self, label: str, source: str, changes: Sequence[FileChange] = ()) -> TestRun:
        """Run the gate on a new tree with the ``source`` diff applied (whose ``changes``
        are inspected, :mod:`bugbout.core.plumbing.tampering.tamper`); remove the tree."""
        checkouts = self.bench.checkouts
        tree = fresh_test_tree(checkouts, self.task.parent, self.folder / label)
        try:
            if self.hidden:
                install_fix_tests(self.task, self.bench.git, tree)
            for examiner in self.examiners:
                apply_patch(tree, examiner.patch.tests)
            apply_patch(tree, source)
            findings = self.bench.runner.suspicious(tree.edits, tree.lower, changes)
            run = self.bench.run(tree, self.targets, label=label, skip=self.skip)
            return flag(run, findings)
        finally:
            checkouts.remove(self.folder / label)


def gate_targets(
    task: Task,
    tests: Sequence[str],
    *,
    hidden: bool,
    examiners: Sequence[Attempt],
    runner: TestRunner,
) -> list[str]:
    """``tests``, and any test file (as ``runner`` knows them) the gate adds that none of
    them already covers."""
    targets = list(dict.fromkeys(tests))
    modules = list(task.test_files) if hidden else []
    for examiner in examiners:
        modules += [
            change.path
            for change in examiner.patch.area(ChangeArea.TEST)
            if change.kind != ChangeKind.DELETED and runner.is_test_file(change.path)
        ]
    for module in dict.fromkeys(modules):
        if not any(module == target or _inside(module, target) for target in targets):
            targets.append(module)
    return targets


def _inside(path: str, directory: str) -> bool:
    directory = directory.rstrip("/")
    return directory in ("", ".") or PurePosixPath(directory) in PurePosixPath(path).parents
