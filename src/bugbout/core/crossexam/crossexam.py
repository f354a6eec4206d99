"""Cross-examination: every test an author wrote, run against every patch and the unfixed code.

The matrix has one column per patch (``UNFIXED``, then each finished contestant with source
changes) and one row per test. Its rows come from the *authors*:

- every attempt, contestant or examiner, whose test changes add or modify a test module;
- ``SUITE``, the repository's own tests as they were in the parent commit (so none of the
  fix's tests), when the suite is run.

An author's modules are installed next to where the author wrote them, under a new name the
test runner gives them (pytest: ``<dir>/test_bb_<author>__<name>.py``): two authors'
modules never collide, with each other or with the suite's, and the directory's
``conftest.py`` still applies. An author who edited
an existing test module gets the edited copy installed under its new name; the suite's file
is never touched. Only test modules are installed: an author's other test files (a ``conftest.py``,
helpers, data) are not, since they would change every other author's tests.

Each column is a fresh copy of the parent commit, with only that contestant's *source*
changes applied and every author's modules installed, and runs in one test run: the
cost of a task is one process per column, whatever the number of authors and tests.

A tampered column's tests are tried author by author: the authors whose tests alone taint
it are left out with the reason (of every column when it is the unfixed code's, else of
that column), and the columns run again without them (:mod:`bugbout.core.crossexam.tainting`).
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bugbout.core.crossexam.tainting import isolate
from bugbout.core.plumbing.bench import Bench
from bugbout.core.plumbing.selection.affected import Selection
from bugbout.core.plumbing.tampering.tamper import flag
from bugbout.core.plumbing.testruns.test_runner import TestRunner, file_of
from bugbout.core.plumbing.trees.added_files import added_files
from bugbout.core.plumbing.trees.patch import PatchError, apply_patch
from bugbout.core.plumbing.trees.testtree import fresh_test_tree
from bugbout.core.plumbing.trees.tree_files import install_file
from bugbout.core.store.race_records import Attempt, AttemptStatus, ChangeArea, ChangeKind
from bugbout.core.store.records import Outcome, RunStatus, Task, TestRun, record_threads
from bugbout.core.store.verdict_records import SUITE, UNFIXED, Matrix

_UNSAFE = re.compile(r"[^A-Za-z0-9]+")


@dataclass(frozen=True)
class InstalledModule:
    """One author's test module as installed in every column's tree."""

    author: str
    path: str
    """Where it is installed, relative to the tree."""
    original: str
    """Where the author wrote it."""
    content: bytes


def cross_examine(
    task: Task,
    attempts: Sequence[Attempt],
    bench: Bench,
    *,
    run_suite: bool,
    suite: dict[str, Selection] | None = None,
    jobs: int = 1,
) -> Matrix:
    """Run every author's tests (and the suite's, with ``run_suite``) against every patch.

    ``attempts`` are the task's contestants and examiners; when a name appears more than
    once, its latest round is used. Returns the matrix of executed outcomes; every column's
    test run is in ``Matrix.runs`` (a patch that does not apply gets a ``crashed`` run
    that says why, and no outcomes).

    ``suite`` holds, by contestant, the suite's tests its patch can affect
    (:mod:`bugbout.core.plumbing.selection.affected`): a column runs those instead of the whole
    suite (and holds the unfixed outcome of the others), and the ``UNFIXED`` column runs every test
    some column runs. ``jobs`` columns run at once.

    Authors whose tests alone taint a column's run are left out (``Matrix.left_out``),
    and the columns run without them.
    """
    chosen = _latest(task, attempts)
    columns: list[tuple[str, Attempt | None]] = [(UNFIXED, None)]
    columns += [(attempt.contestant, attempt) for attempt in chosen if is_column(attempt)]
    vendors: dict[str, str | None] = {UNFIXED: None}
    if run_suite:
        vendors[SUITE] = None
    checkouts = bench.checkouts
    work = checkouts.cache_dir / "work"
    work.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f"crossexam-{_slug(task.id)}-", dir=work))
    try:
        base = checkouts.base(task.parent)
        authors: list[str] = []
        written: dict[str, dict[str, bytes]] = {}
        for number, attempt in enumerate(chosen):
            if written_modules(attempt, bench.runner):
                authors.append(attempt.contestant)
                written[attempt.contestant] = _read_modules(
                    attempt, base, scratch / f"a{number}", bench.runner
                )
        installed = plan_installation(written, base, bench.runner)
        names = [name for name, _ in columns]
        suites = _suite_targets(names, suite, base, bench.suite if run_suite else None)

        def run_columns(excluded: Mapping[str, frozenset[str]], folder: str) -> dict[str, TestRun]:
            """The columns named, each without the tests of the authors given."""

            def run(name: str) -> TestRun:
                number = names.index(name)
                modules = [module for module in installed if module.author not in excluded[name]]
                targets, skip = suites[name]
                return _run_column(
                    task,
                    name,
                    columns[number][1],
                    modules,
                    [*targets, *dict.fromkeys(module.path for module in modules)],
                    tree=scratch / f"{folder}{number}",
                    bench=bench,
                    skip=skip,
                )

            with record_threads(jobs) as pool:
                return dict(zip(excluded, pool.map(run, excluded), strict=True))

        def alone(column: str, author: str) -> TestRun:
            number = names.index(column)
            modules = [module for module in installed if module.author == author]
            paths = [module.path for module in modules]
            tree = scratch / f"p{number}-{authors.index(author)}"
            patched = columns[number][1]
            return _run_column(task, column, patched, modules, paths, tree=tree, bench=bench)

        rounds = itertools.count(1)
        isolated = isolate(
            run_columns(dict.fromkeys(names, frozenset()), "c"),
            authors,
            alone=alone,
            again=lambda excluded: run_columns(excluded, f"r{next(rounds)}-"),
            jobs=jobs,
        )
        runs, left_out = isolated.runs, isolated.left_out
        authors = [author for author in authors if author not in isolated.everywhere]
        installed = [m for m in installed if m.author not in isolated.everywhere]
    finally:
        checkouts.remove(scratch)
    for attempt in chosen:
        if attempt.contestant in authors or is_column(attempt):
            vendors[attempt.contestant] = attempt.vendor
    by_module = {module.path: module.author for module in installed}
    rows = _rows(runs, by_module, authors, run_suite=run_suite)
    known = {test for tests in rows.values() for test in tests}
    outcomes = {name: _cells(run, known) for name, run in runs.items()}
    if suite is not None:
        _carry(outcomes, runs, suite, rows.get(SUITE, []))
    return Matrix(
        task_id=task.id,
        patches=[name for name, _ in columns],
        authors=rows,
        vendors=vendors,
        outcomes=outcomes,
        runs=runs,
        left_out=left_out,
    )


def is_column(attempt: Attempt) -> bool:
    """Whether an attempt's patch is a matrix column: a contestant that finished with source
    changes (an empty patch is the unfixed code again)."""
    return (
        attempt.role == "contestant"
        and attempt.status == AttemptStatus.FINISHED
        and bool(attempt.patch.source.strip())
    )


def written_modules(attempt: Attempt, runner: TestRunner) -> list[str]:
    """The test files (as ``runner`` knows them) an attempt added or modified (regular
    files only), sorted."""
    return sorted(
        change.path
        for change in attempt.patch.area(ChangeArea.TEST)
        if change.kind != ChangeKind.DELETED
        and not change.symlink
        and not change.binary
        and runner.is_test_file(change.path)
    )


def author_slug(author: str) -> str:
    """An author's name as it appears in installed module names: lowercase letters, digits
    and single underscores (never two in a row, so ``__`` ends it)."""
    return _slug(author).lower() or "author"


def plan_installation(
    written: dict[str, dict[str, bytes]], base: Path, runner: TestRunner
) -> list[InstalledModule]:
    """Where each author's modules go (``runner.install_as``: pytest's are
    ``<dir>/test_bb_<author>__<name>.py``), made unique against each other and against
    every file of ``base`` (authors whose names read the same once made safe get ``_2``,
    ``_3``..., and so do their modules)."""
    slugs: dict[str, str] = {}
    used_slugs: set[str] = set()
    for author in written:
        slug = author_slug(author)
        candidate, number = slug, 1
        while candidate in used_slugs:
            number += 1
            candidate = f"{slug}_{number}"
        used_slugs.add(candidate)
        slugs[author] = candidate
    taken: set[str] = set()
    installed = []
    for author, modules in written.items():
        for original, content in sorted(modules.items()):
            number = 1
            path = runner.install_as(original, slugs[author], number)
            while path in taken or os.path.lexists(base / path):
                number += 1
                path = runner.install_as(original, slugs[author], number)
            taken.add(path)
            installed.append(InstalledModule(author, path, original, content))
    return installed


# -- internals ------------------------------------------------------------------------------


def _latest(task: Task, attempts: Sequence[Attempt]) -> list[Attempt]:
    """One attempt per name (its latest round), in the order the names first appear."""
    chosen: dict[str, Attempt] = {}
    for attempt in attempts:
        if attempt.task_id != task.id:
            raise ValueError(
                f"attempt {attempt.contestant!r} is for task {attempt.task_id}, not {task.id}"
            )
        previous = chosen.get(attempt.contestant)
        if previous is None or attempt.round >= previous.round:
            chosen[attempt.contestant] = attempt
    return list(chosen.values())


def _slug(name: str) -> str:
    return _UNSAFE.sub("_", name).strip("_")


def _read_modules(
    attempt: Attempt, base: Path, scratch: Path, runner: TestRunner
) -> dict[str, bytes]:
    """The content of each test module the attempt wrote: read from its test changes when
    they only add text files, else those changes applied to a scratch tree holding only
    the base files they touch. Empty when they do not apply."""
    modules = written_modules(attempt, runner)
    changes = attempt.patch.area(ChangeArea.TEST)
    added = added_files(attempt.patch.tests, changes)
    if added is not None:
        return {path: added[path] for path in modules if path in added}
    scratch.mkdir(parents=True)
    for change in changes:
        if change.kind == ChangeKind.ADDED:
            continue
        source, target = base / change.path, scratch / change.path
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(source.readlink())
        elif source.is_file():
            shutil.copy2(source, target)
    try:
        apply_patch(scratch, attempt.patch.tests)
    except PatchError:
        return {}
    found = {}
    for path in modules:
        location = scratch / path
        if location.is_file() and not location.is_symlink():
            found[path] = location.read_bytes()
    return found


def _suite_targets(
    names: list[str],
    suite: dict[str, Selection] | None,
    base: Path,
    tests: tuple[str, ...] | None,
) -> dict[str, tuple[list[str], frozenset[str]]]:
    """Each column's targets of the repository's suite (``tests``, its paths) and the
    tests to skip (none without ``tests``; all of it without ``suite``), only paths the
    unfixed tree has."""
    if not tests:
        return {name: ([], frozenset()) for name in names}
    whole = Selection(tests)
    chosen = {name: (suite or {}).get(name, whole) for name in names if name != UNFIXED}
    if suite is not None and UNFIXED in names:
        union = Selection(())
        for selection in chosen.values():
            union = union.union(selection)
        chosen[UNFIXED] = union
    found = {}
    for name in names:
        selection = chosen.get(name, whole)
        if selection.everything:
            selection = whole
        targets = [t for t in selection.targets if os.path.lexists(base / t)]
        found[name] = (targets, selection.skip)
    return found


def _carry(
    outcomes: dict[str, dict[str, Outcome]],
    runs: dict[str, TestRun],
    suite: dict[str, Selection],
    tests: list[str],
) -> None:
    """Give each patch's column the unfixed outcome of every suite test its selection
    left out (the patch cannot affect it), when its run went through: every column then
    answers for the same suite tests, as with the whole suite run."""
    unfixed = outcomes.get(UNFIXED, {})
    for name, selection in suite.items():
        cells, run = outcomes.get(name), runs.get(name)
        if cells is None or run is None or run.status != RunStatus.OK or selection.everything:
            continue
        for test in tests:
            if test not in cells and test in unfixed and not selection.runs(test):
                cells[test] = unfixed[test]
        outcomes[name] = dict(sorted(cells.items()))


def _run_column(
    task: Task,
    name: str,
    attempt: Attempt | None,
    installed: list[InstalledModule],
    targets: list[str],
    *,
    tree: Path,
    bench: Bench,
    skip: frozenset[str] = frozenset(),
) -> TestRun:
    """One column: a fresh parent tree, the patch's source changes, every author's modules,
    one pytest process, ``tampered`` when the patch's source is flagged
    (:mod:`bugbout.core.plumbing.tampering.tamper`). The tree is removed afterwards."""
    checkouts = bench.checkouts
    layered = fresh_test_tree(checkouts, task.parent, tree)
    try:
        try:
            if attempt is not None:
                apply_patch(layered, attempt.patch.source)
            for module in installed:
                install_file(layered, module.path, module.content)
        except PatchError as exc:
            return TestRun(label=name, status=RunStatus.CRASHED, detail=str(exc))
        if not targets:
            return TestRun(
                label=name,
                status=RunStatus.NO_TESTS,
                detail="nothing to run: no author wrote a test module and the suite is off",
            )
        findings = []
        if attempt is not None:
            changes = attempt.patch.area(ChangeArea.SOURCE)
            findings = bench.runner.suspicious(layered.edits, layered.lower, changes)
        return flag(bench.run(layered, targets, label=name, skip=skip), findings)
    finally:
        checkouts.remove(tree)


def _rows(
    runs: dict[str, TestRun], by_module: dict[str, str], authors: list[str], *, run_suite: bool
) -> dict[str, list[str]]:
    """Each author's tests: every node id seen in any column, by the module it is in. An
    installed module that never collected stands for its tests under its own path."""
    rows: dict[str, set[str]] = {author: set() for author in authors}
    if run_suite:
        rows[SUITE] = set()
    for run in runs.values():
        for test in run.outcomes:
            author = by_module.get(file_of(test), SUITE if run_suite else None)
            if author is not None:
                rows[author].add(test)
    collected = {file_of(test) for tests in rows.values() for test in tests}
    for run in runs.values():
        for error in run.collection_errors:
            author = by_module.get(error)
            if author is not None and error not in collected:
                rows[author].add(error)
    return {author: sorted(tests) for author, tests in rows.items()}


def _cells(run: TestRun, known: set[str]) -> dict[str, Outcome]:
    """A column's cells: the run's outcomes, and ``error`` for every known test whose module
    (or directory, or class) failed to collect in this run."""
    cells = {test: outcome for test, outcome in run.outcomes.items() if test in known}
    errors = list(run.collection_errors)
    for test in sorted(known):
        if test not in cells and any(_covers(error, test) for error in errors):
            cells[test] = Outcome.ERROR
    return dict(sorted(cells.items()))


def _covers(error: str, test: str) -> bool:
    """Whether a collection error at node ``error`` prevented ``test`` from running."""
    if error in ("", "."):
        return True
    return (
        test == error
        or test.startswith(error + "::")
        or file_of(test).startswith(error.rstrip("/") + "/")
    )
