"""Which of the repository's tests a patch can affect, from a coverage map of the unfixed code.

Once per task the whole suite runs on the unfixed code (with the fix's test files, as the
audit's baseline) with the test runner's map of which functions of the package each test
runs (pytest's ``bugbout_coverage`` plugin: :class:`CoverageMap`, part of the task's
:class:`BaseRun`; a runner that cannot tell leaves none). A patch's selection
(:func:`select`) is then:

- every test that ran a function the patch changes (:func:`changed_in_functions`: the
  functions of the unfixed code its changed lines lie in, as the runner parses them);
- every test that did not pass on the unfixed code, or is unstable, or that the map does
  not know (its record is missing or invalid);
- the whole suite when the patch changes a line a module's or a class's body runs (a
  constant, an import, a decorator, a default, a function's name or docstring: code
  that runs at import, which no test is charged with), adds or deletes a file, changes
  a file that is not a plain module (``__init__.py``, ``conftest.py``, data), changes a
  function that ran outside any test (start-up, a plugin, a module's import) or a file
  whose import the tracer did not see; and when the base run did not finish or left no
  map.

The map is written by the code under test's process: it is read bounded and validated,
and a record that does not check out makes its test run for every patch. It is computed
from the unfixed code before any patch is looked at, so a patch cannot choose which of
its tests are skipped.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pydantic import Field

from bugbout.core.plumbing.testruns.test_runner import TestRunner, file_of
from bugbout.core.plumbing.trees.patch import PatchError, apply_patch
from bugbout.core.store.filenames import FileName, TestId
from bugbout.core.store.race_records import Attempt, ChangeArea, ChangeKind, FileChange
from bugbout.core.store.records import Oracle, Outcome, Record, RunStatus, TestRun, Versioned

MAP_VERSION = "2"
"""The coverage map's format, in the base run's key: a map of another format is never read."""
MAX_FILES = 200_000
"""The most files a map may name; more are not read."""
MAX_FUNCTIONS = 2_000_000
MAX_TESTS = 2_000_000
MAX_NAME = 8_192
"""The longest node id or path read."""


class CoverageMap(Record):
    """Which functions of the package each test ran on the unfixed code."""

    files: list[FileName] = Field(default_factory=list)
    """Paths relative to the tree; functions name them by index."""
    functions: list[tuple[int, int]] = Field(default_factory=list)
    """Each function's file and first line (``co_firstlineno``); the rest name them by index."""
    traces: list[list[int]] = Field(default_factory=list)
    """The distinct sets of functions tests ran."""
    tests: dict[TestId, int] = Field(default_factory=dict)
    """Each test's trace."""
    outside: list[int] = Field(default_factory=list)
    """Functions that ran outside any test (start-up, plugins, a module's import)."""
    untraced: list[int] = Field(default_factory=list)
    """Files whose import the tracer did not see."""

    def files_of(self, test: str) -> set[str]:
        """The files of the functions ``test`` ran."""
        return {self.files[self.functions[f][0]] for f in self.traces[self.tests[test]]}


class BaseRun(Versioned):
    """The task's suite on the unfixed code, with the fix's test files: the audit's
    baseline, and the coverage map that selects each patch's tests."""

    task_id: str
    key: str = ""
    run: TestRun
    coverage: CoverageMap = Field(default_factory=CoverageMap)


@dataclass
class _Reading:
    """The map so far, and the numbering of the process being read."""

    paths: dict[str, int]
    functions: dict[tuple[int, int], int]
    tests: dict[str, set[int]]
    outside: set[int]
    untraced: set[int]

    def read(self, chunk: bytes) -> None:
        files: dict[int, int] = {}
        functions: dict[int, int] = {}
        for line in chunk.splitlines():
            record = _record(line)
            if record is None:
                continue
            if "path" in record:
                number, path = record.get("file"), record["path"]
                if isinstance(number, int) and _is_path(path) and len(self.paths) < MAX_FILES:
                    files[number] = self.paths.setdefault(str(path), len(self.paths))
            elif "function" in record:
                number, file, first = record["function"], record.get("file"), record.get("line")
                known = isinstance(file, int) and file in files and isinstance(first, int)
                if isinstance(number, int) and known and len(self.functions) < MAX_FUNCTIONS:
                    key = (files[file], first)  # type: ignore[index]
                    functions[number] = self.functions.setdefault(key, len(self.functions))  # type: ignore[arg-type]
            elif "test" in record:
                name, ran = record["test"], _indices(record.get("functions"), functions)
                if _is_name(name) and ran is not None and len(self.tests) < MAX_TESTS:
                    self.tests.setdefault(str(name), set()).update(ran)
            elif "outside" in record:
                self.outside.update(_indices(record["outside"], functions) or ())
            elif "untraced" in record:
                self.untraced.update(_indices(record["untraced"], files) or ())


def read_coverage(chunks: Sequence[bytes]) -> CoverageMap:
    """The map from what each test process of the base run wrote (each numbers its
    files and functions its own way); lines that are not well-formed records are dropped."""
    reading = _Reading({}, {}, {}, set(), set())
    for chunk in chunks:
        reading.read(chunk)
    traces: dict[frozenset[int], int] = {}
    tests = {
        name: traces.setdefault(frozenset(ran), len(traces)) for name, ran in reading.tests.items()
    }
    return CoverageMap(
        files=list(reading.paths),
        functions=list(reading.functions),
        traces=[sorted(trace) for trace in traces],
        tests=tests,
        outside=sorted(reading.outside),
        untraced=sorted(reading.untraced),
    )


def _record(line: bytes) -> dict[str, object] | None:
    if len(line) > 4 * MAX_NAME + 16 * MAX_FUNCTIONS:
        return None
    try:
        found = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    return found if isinstance(found, dict) else None


def _is_name(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) <= MAX_NAME and "\0" not in value


def _is_path(value: object) -> bool:
    if not _is_name(value):
        return False
    path = PurePosixPath(str(value))
    return not path.is_absolute() and ".." not in path.parts and "\\" not in str(value)


def _indices(value: object, local: dict[int, int]) -> list[int] | None:
    """The shared indices a record names; ``None`` if it names one never announced."""
    if not isinstance(value, list) or not all(isinstance(i, int) and i in local for i in value):
        return None
    return [local[i] for i in value]


# -- what a patch changes --------------------------------------------------------------------


def changed_in_functions(
    base: Path, source: str, changes: Sequence[FileChange], runner: TestRunner
) -> dict[str, frozenset[int] | None]:
    """For each file the ``source`` diff changes: the first lines of the functions of the
    unfixed file that its changed lines lie in (the ``runner`` says which:
    :meth:`~bugbout.core.plumbing.testruns.test_runner.TestRunner.changed_functions`); ``None``
    when the runner cannot tell, or the file is added, deleted, a symlink or not text."""
    scope: dict[str, frozenset[int] | None] = {}
    with tempfile.TemporaryDirectory(prefix="bugbout-affected-") as scratch:
        after = Path(scratch)
        for change in changes:
            original = base / change.path
            if change.kind != ChangeKind.ADDED and original.is_file():
                (after / change.path).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(original, after / change.path)
        try:
            apply_patch(after, source)
        except PatchError:
            return {change.path: None for change in changes}
        for change in changes:
            scope[change.path] = None
            if change.kind == ChangeKind.MODIFIED and not change.symlink:
                scope[change.path] = _functions(
                    change.path, base / change.path, after / change.path, runner
                )
    return scope


def _functions(path: str, before: Path, after: Path, runner: TestRunner) -> frozenset[int] | None:
    try:
        old_text = before.read_text(encoding="utf-8")
        new_text = after.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return runner.changed_functions(path, old_text, new_text)


# -- selecting -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Selection:
    """The repository's tests to run for a patch: ``targets`` (paths for the runner) without
    the tests ``skip`` names. ``everything``: the whole suite, and why."""

    targets: tuple[str, ...]
    skip: frozenset[str] = frozenset()
    everything: str = ""

    def union(self, other: Selection) -> Selection:
        """Every test either selection runs."""
        if self.everything or other.everything:
            return self if self.everything else other
        targets = tuple(dict.fromkeys((*self.targets, *other.targets)))
        mine, theirs = set(self.targets), set(other.targets)
        skip = {t for t in self.skip if file_of(t) not in theirs or t in other.skip}
        skip |= {t for t in other.skip if file_of(t) not in mine}
        return Selection(targets, frozenset(skip))

    def runs(self, test: str) -> bool:
        """Whether ``test`` (a node id) is among the selected."""
        if test in self.skip:
            return False
        return any(file_of(test) == t or _inside(test, t) for t in self.targets)


def select(
    base: BaseRun,
    scope: dict[str, frozenset[int] | None],
    *,
    suite: tuple[str, ...],
    always: Iterable[str] = (),
) -> Selection:
    """The tests of ``suite`` (the repository's test paths) that a patch changing the
    functions in ``scope`` (:func:`changed_in_functions`) can affect, as the module says."""
    coverage, run = base.coverage, base.run
    why = _unknowable(base, scope)
    if why:
        return Selection(suite, everything=why)
    changed = {
        number
        for number, (file, first) in enumerate(coverage.functions)
        if first in (scope.get(coverage.files[file]) or ())
    }
    if changed.intersection(coverage.outside):
        ran = sorted({coverage.files[coverage.functions[f][0]] for f in changed})
        return Selection(suite, everything=f"{', '.join(ran)} runs outside any test")
    reaching = {i for i, trace in enumerate(coverage.traces) if changed.intersection(trace)}
    chosen = set(always)
    for test, outcome in run.outcomes.items():
        trace = coverage.tests.get(test)
        passed = outcome in (Outcome.PASSED, Outcome.SKIPPED)
        if trace is None or not passed or trace in reaching:
            chosen.add(test)
    targets = {file_of(test) for test in chosen if test in run.outcomes}
    targets |= set(run.collection_errors)
    skip = frozenset(t for t in run.outcomes if t not in chosen and file_of(t) in targets)
    return Selection(tuple(sorted(targets)), skip)


def _unknowable(base: BaseRun, scope: dict[str, frozenset[int] | None]) -> str:
    """Why no map can say which tests the change reaches; empty when it can."""
    coverage, run = base.coverage, base.run
    if run.status != RunStatus.OK:
        return f"the base run ended {run.status.value}"
    if run.outcomes and not coverage.tests:
        return "the base run left no coverage map"
    untraced = {coverage.files[i] for i in coverage.untraced}
    for path, functions in scope.items():
        if functions is None:
            return f"{path} changes outside functions"
        if path in untraced:
            return f"{path} was imported where the tracer could not see"
    return ""


def restrict(run: TestRun, selection: Selection) -> TestRun:
    """``run`` with only the outcomes of the tests ``selection`` runs: the baseline a
    gate run on that selection is compared with."""
    if selection.everything:
        return run
    outcomes = {test: outcome for test, outcome in run.outcomes.items() if selection.runs(test)}
    return run.model_copy(update={"outcomes": outcomes})


def _inside(test: str, target: str) -> bool:
    target = target.rstrip("/")
    return target in ("", ".") or PurePosixPath(target) in PurePosixPath(file_of(test)).parents


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
