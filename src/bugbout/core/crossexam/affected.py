"""Which of the repository's tests a patch can affect, from a coverage map of the unfixed code.

Once per task the whole suite runs on the unfixed code (with the fix's test files, as the
audit's baseline) under the ``bugbout_coverage`` pytest plugin, which records which files
of the package each test runs (:class:`CoverageMap`, part of the task's :class:`BaseRun`).
A patch's selection (:func:`select`) is then:

- every test that ran a function of a file the patch changes inside functions only;
- every test that did not pass on the unfixed code, or is unstable, or that the map does
  not know (its record is missing or invalid);
- the whole suite when the patch changes a file anywhere else (a module's or a class's
  own statements, which run at import and which no test is charged with), deletes a
  file, adds or changes a file that is not a plain module (``__init__.py``,
  ``conftest.py``, data), or changes a file that ran outside any test (a plugin, start-up
  code); and when the base run did not finish or left no map.

The map is written by the code under test's process: it is read bounded and validated,
and a record that does not check out makes its test run for every patch. It is computed
from the unfixed code before any patch is looked at, so a patch cannot choose which of
its tests are skipped.
"""

from __future__ import annotations

import ast
import difflib
import json
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pydantic import Field

from bugbout.core.plumbing.patch import PatchError, apply_patch
from bugbout.core.store.filenames import FileName
from bugbout.core.store.records import (
    ChangeKind,
    FileChange,
    Outcome,
    Record,
    RunStatus,
    TestRun,
    Versioned,
)

MAX_FILES = 200_000
"""The most files a map may name; more are not read."""
MAX_TESTS = 2_000_000
MAX_NAME = 8_192
"""The longest node id or path read."""
PLAIN = frozenset({"__init__.py", "conftest.py", "sitecustomize.py", "usercustomize.py"})
"""Module names whose mere presence changes what other code sees: never *plain*."""
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


class CoverageMap(Record):
    """Which files of the package each test ran on the unfixed code."""

    files: list[FileName] = Field(default_factory=list)
    """Paths relative to the tree; tests name them by index."""
    tests: dict[FileName, list[int]] = Field(default_factory=dict)
    outside: list[int] = Field(default_factory=list)
    """Files that ran outside any test (start-up, plugins)."""


class BaseRun(Versioned):
    """The task's suite on the unfixed code, with the fix's test files: the audit's
    baseline, and the coverage map that selects each patch's tests."""

    task_id: str
    key: str = ""
    run: TestRun
    coverage: CoverageMap = Field(default_factory=CoverageMap)


def read_coverage(chunks: Sequence[bytes]) -> CoverageMap:
    """The map from what each pytest process of the base run wrote (each numbers its
    files its own way); lines that are not well-formed records are dropped."""
    paths: dict[str, int] = {}
    tests: dict[str, set[int]] = {}
    outside: set[int] = set()
    for chunk in chunks:
        local: dict[int, int] = {}
        for line in chunk.splitlines():
            record = _record(line)
            if record is None:
                continue
            if "path" in record:
                number, path = record.get("file"), record["path"]
                if isinstance(number, int) and _is_path(path) and len(paths) < MAX_FILES:
                    local[number] = paths.setdefault(str(path), len(paths))
            elif "test" in record:
                name, files = record["test"], _indices(record.get("files"), local)
                if _is_name(name) and files is not None and len(tests) < MAX_TESTS:
                    tests.setdefault(str(name), set()).update(files)
            elif "outside" in record:
                outside.update(_indices(record["outside"], local) or ())
    return CoverageMap(
        files=list(paths),
        tests={name: sorted(files) for name, files in tests.items()},
        outside=sorted(outside),
    )


def _record(line: bytes) -> dict[str, object] | None:
    if len(line) > 4 * MAX_NAME + 16 * MAX_FILES:
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
    """The shared indices of a record's files; ``None`` if it names one never announced."""
    if not isinstance(value, list) or not all(isinstance(i, int) and i in local for i in value):
        return None
    return [local[i] for i in value]


# -- what a patch changes --------------------------------------------------------------------


def changed_in_functions(base: Path, source: str, changes: Sequence[FileChange]) -> dict[str, bool]:
    """For each file the ``source`` diff changes: whether every changed line lies inside a
    function (before and after the change). ``False`` for anything else: a statement of a
    module or class body, a deleted file, a file that is not a plain module, a file that
    does not parse. Files added as plain modules are left out: they reach a test only
    through changed code that imports them."""
    scope: dict[str, bool] = {}
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
            return {change.path: False for change in changes}
        for change in changes:
            name = PurePosixPath(change.path).name
            plain = name.endswith(".py") and name not in PLAIN and not change.symlink
            if change.kind == ChangeKind.ADDED and plain:
                continue
            if change.kind != ChangeKind.MODIFIED or not plain:
                scope[change.path] = False
                continue
            scope[change.path] = _inside_functions(base / change.path, after / change.path)
    return scope


def _inside_functions(before: Path, after: Path) -> bool:
    try:
        old_text = before.read_text(encoding="utf-8")
        new_text = after.read_text(encoding="utf-8")
        old_spans, new_spans = _function_lines(old_text), _function_lines(new_text)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return False
    old, new = old_text.splitlines(), new_text.splitlines()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if any(n + 1 not in old_spans and old[n].strip() for n in range(i1, i2)):
            return False
        if any(n + 1 not in new_spans and new[n].strip() for n in range(j1, j2)):
            return False
    return True


def _function_lines(text: str) -> set[int]:
    """The line numbers (from 1) inside a function, its ``def`` line included (not its
    decorators, which run at import). A blank line changed elsewhere changes nothing."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, _FUNCTIONS) and node.end_lineno is not None:
            lines.update(range(node.lineno, node.end_lineno + 1))
    return lines


# -- selecting -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Selection:
    """The repository's tests to run for a patch: ``targets`` (paths for pytest) without
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
        skip = {t for t in self.skip if _module(t) not in theirs or t in other.skip}
        skip |= {t for t in other.skip if _module(t) not in mine}
        return Selection(targets, frozenset(skip))

    def runs(self, test: str) -> bool:
        """Whether ``test`` (a node id) is among the selected."""
        if test in self.skip:
            return False
        return any(_module(test) == t or _inside(test, t) for t in self.targets)


def select(
    base: BaseRun,
    scope: dict[str, bool],
    *,
    suite: tuple[str, ...],
    always: Iterable[str] = (),
) -> Selection:
    """The tests of ``suite`` (the repository's test paths) that a patch changing the files
    in ``scope`` (:func:`changed_in_functions`) can affect, as the module says."""
    whole = Selection(suite)
    coverage, run = base.coverage, base.run
    if run.status != RunStatus.OK:
        return Selection(suite, everything=f"the base run ended {run.status.value}")
    if run.outcomes and not coverage.tests:
        return Selection(whole.targets, everything="the base run left no coverage map")
    outside = {coverage.files[i] for i in coverage.outside}
    for path, in_functions in scope.items():
        if not in_functions:
            return Selection(whole.targets, everything=f"{path} changes outside functions")
        if path in outside:
            return Selection(whole.targets, everything=f"{path} runs outside any test")
    touched = {i for i, path in enumerate(coverage.files) if path in scope}
    chosen = set(always)
    for test, outcome in run.outcomes.items():
        files = coverage.tests.get(test)
        passed = outcome in (Outcome.PASSED, Outcome.SKIPPED)
        if files is None or not passed or touched.intersection(files):
            chosen.add(test)
    targets = {_module(test) for test in chosen if test in run.outcomes}
    targets |= set(run.collection_errors)
    skip = frozenset(t for t in run.outcomes if t not in chosen and _module(t) in targets)
    return Selection(tuple(sorted(targets)), skip)


def restrict(run: TestRun, selection: Selection) -> TestRun:
    """``run`` with only the outcomes of the tests ``selection`` runs: the baseline a
    gate run on that selection is compared with."""
    if selection.everything:
        return run
    outcomes = {test: outcome for test, outcome in run.outcomes.items() if selection.runs(test)}
    return run.model_copy(update={"outcomes": outcomes})


def _module(test: str) -> str:
    return test.split("::", 1)[0]


def _inside(test: str, target: str) -> bool:
    target = target.rstrip("/")
    return target in ("", ".") or PurePosixPath(target) in PurePosixPath(_module(test)).parents
