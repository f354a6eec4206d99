"""The records that pass between pipeline stages, serialised as JSON in the store (the
race's and the audit's are in :mod:`bugbout.core.store.race_records`, those of the
other stages after the race in :mod:`bugbout.core.store.verdict_records`).

Every stage reads records and writes records; nothing else flows between stages, so a
bout can stop anywhere and resume from what the store holds. File names and test ids
(``FileName``, ``TestId``) are plain JSON text when they are text, and exact through JSON
whatever their bytes (see ``bugbout.core.store.filenames``). A record that holds them says
its ``format``: one without it was written before ids were plain text, and is read so.
"""

from __future__ import annotations

import hashlib
import threading
from concurrent.futures import ThreadPoolExecutor
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    RootModel,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    model_validator,
)

from bugbout.core.store.filenames import (
    FileName,
    PlainTestId,
    TestId,
    legacy_names,
    reading_legacy,
)

_REBUILDING = threading.RLock()
"""Held while a record class builds its validator: pydantic's build on first use is not
thread-safe (a class being built lacks its schema, which another thread reads)."""


if TYPE_CHECKING:
    _Model = BaseModel
else:
    _Model = object  # a mixin: the record's own pydantic base comes after it


class _BuiltOneAtATime(_Model):
    """Pydantic's ``model_rebuild``, one thread at a time (the race's threads make
    records at once)."""

    @classmethod
    def model_rebuild(
        cls,
        *,
        force: bool = False,
        raise_errors: bool = True,
        _parent_namespace_depth: int = 2,
        _types_namespace: Any = None,
    ) -> bool | None:
        with _REBUILDING:
            return super().model_rebuild(
                force=force,
                raise_errors=raise_errors,
                _parent_namespace_depth=_parent_namespace_depth + 1,
                _types_namespace=_types_namespace,
            )


def record_threads(workers: int, prefix: str = "") -> ThreadPoolExecutor:
    """A pool of ``workers`` threads that may make records: every record class imported
    so far is built first (:func:`build_records`)."""
    build_records()
    return ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix=prefix)


def build_records() -> None:
    """Build the validator of every record class imported so far that is not built yet,
    before threads make records: a class built on first use while another thread makes
    one of it, or of a record that holds it, is seen half built (its validator taken from
    its base, its schema missing), and the record is lost."""
    pending: list[type[BaseModel]] = [Record, RecordRoot]
    with _REBUILDING:
        while pending:
            for subclass in pending.pop().__subclasses__():
                pending.append(subclass)
                if not subclass.__pydantic_complete__:
                    subclass.model_rebuild(raise_errors=False)


class Record(_BuiltOneAtATime, BaseModel):
    """Base of every stored record: unknown keys are errors, values are validated on load."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


FORMAT: Literal[2] = 2
"""How records write file names and test ids: 2, as JSON text (escaped only when not
text); 1 (no ``format``), every one escaped, backslashes doubled."""


class Versioned(Record):
    """A record stored on its own (a file, or an entry of one) that holds file names or
    test ids: it says how it wrote them, and one without ``format`` is read as format 1."""

    format: Literal[2] = FORMAT

    @model_validator(mode="wrap")
    @classmethod
    def _names_as_written(
        cls, data: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
    ) -> Any:
        before = None
        if info.mode == "json" and isinstance(data, dict):
            # nested without ``format``: as the record around it (a file's own: format 1)
            before = False if "format" in data else (True if reading_legacy() is None else None)
        with legacy_names(before):
            return handler(data)


RootT = TypeVar("RootT")


class RecordRoot(_BuiltOneAtATime, RootModel[RootT], Generic[RootT]):
    """Base of a record that is one mapping (``oracles.json``): built on first use, like
    ``Record``; a ``RootModel[...]`` of its own would be built at import."""

    model_config = ConfigDict(defer_build=True)


class IssueRef(Record):
    """An issue or pull request a commit names: ``#12``, ``gh-12``, a GitHub URL."""

    number: int
    url: str | None = None
    closing: bool = False
    """Named with a closing keyword (``Fixes #12``)."""


class Issue(Record):
    """An issue as an issue source returns it."""

    number: int
    title: str = ""
    body: str = ""
    url: str | None = None
    is_pull_request: bool = False
    closes: list[int] = Field(default_factory=list)
    """For a pull request: the issues it closes."""


class TaskIssue(Record):
    """The issue a task replays, as written to ``tasks.json``."""

    number: int
    title: str = ""
    url: str | None = None
    source: str = ""
    """The issue source that knew it; ``commit`` when none did, and the task is then told
    as one that names no issue is (its message scrubbed, then its failures)."""


HISTORY_TIERS = ("issue-fix", "fix", "modified-test", "feature")
INJECTED_TIER = "injected"
TIERS = (*HISTORY_TIERS, INJECTED_TIER)
"""Where tasks come from (a task's ``tier``): from the history, ``issue-fix``, a fix that
names an issue and adds a test, ``fix``, one that names none, ``modified-test``, a fix that
changes existing tests, ``feature``, a change that is not a fix but adds tests;
``injected``, a bug bugbout put into the current code (a mutant)."""


class Task(Record):
    """A bug agents will try to fix: a fix from the project's history, or an injected
    bug whose fix is its inverse."""

    id: str
    tier: str = "issue-fix"
    """Where the task comes from, one of :data:`TIERS` (a store written before tiers
    reads as ``issue-fix``); reports split their rates by it."""
    sha: str
    parent: str
    date: str
    """The fix's commit date, ISO 8601 with its offset."""
    title: str
    issue: TaskIssue
    problem_statement: str = ""
    statement_origin: str = ""
    """Where the statement of a task that names no issue comes from: ``scrubbed``, or
    ``drafted by <contestant> (<model>)``; a draft not used says why."""
    source_files: list[FileName]
    test_files: list[FileName]
    """Test modules the fix added or modified: the ones the oracle runs."""
    changed_test_files: list[FileName] = Field(default_factory=list)
    """Every file under the tests the fix added or modified (modules, conftest, data)."""
    deleted_test_files: list[FileName] = Field(default_factory=list)
    added_tests: list[TestId] = Field(default_factory=list)
    """``path::Class::test`` names of the tests the fix added or gave new cases."""
    modified_tests: list[TestId] = Field(default_factory=list)
    """Existing tests whose code the fix changed, when it added none (a task of tier
    ``modified-test``, kept only when one of them is fail-to-pass)."""
    scored: bool = True
    reason: str | None = None
    """Why the task is not scored, when it is not."""

    @property
    def drafted(self) -> bool:
        """Whether a model drafted its statement: attempts on it are keyed by that text."""
        return self.statement_origin.startswith("drafted by ")

    @staticmethod
    def id_for(sha: str) -> str:
        """A task's id: stable, derived from the fix commit."""
        return sha[:12]


class TaskSet(Versioned):
    """What mining found: the tasks, and how much history was examined and left out."""

    examined: int = 0
    excluded: dict[str, int] = Field(default_factory=dict)
    tasks: list[Task] = Field(default_factory=list)

    def exclude(self, reason: str, count: int = 1) -> None:
        """Count ``count`` examined commits left out for ``reason``."""
        self.excluded[reason] = self.excluded.get(reason, 0) + count

    def get(self, task_id: str) -> Task:
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)


class Outcome(StrEnum):
    """One test's outcome in one run."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    XPASSED = "xpassed"


FAILING = frozenset({Outcome.FAILED, Outcome.ERROR, Outcome.XPASSED})
"""Outcomes that count as a test failing."""


class RunStatus(StrEnum):
    """How a test run as a whole ended."""

    OK = "ok"
    TIMEOUT = "timeout"
    NO_TESTS = "no-tests"
    COLLECTION_FAILED = "collection-failed"
    CRASHED = "crashed"
    TAMPERED = "tampered"
    """The code under test meddled with how outcomes are made or reported (its reasons in
    ``TestRun.tampering``): no outcome of the run can be trusted."""


class TestRun(Record):
    """One pytest process: which tree it ran on and every test's outcome, by node id."""

    __test__ = False  # not a pytest class

    label: str
    status: RunStatus
    exit_code: int | None = None
    duration: float = 0.0
    outcomes: dict[TestId, Outcome] = Field(default_factory=dict)
    collection_errors: dict[FileName, str] = Field(default_factory=dict)
    """Modules that failed to collect, with the first line of their error."""
    skipped_modules: dict[FileName, str] = Field(default_factory=dict)
    """Modules skipped as a whole as they were collected (``pytest.importorskip``, a skip
    at module level), with the first line of the reason."""
    failures: dict[TestId, str] = Field(default_factory=dict)
    """Tests that failed or errored, with the first line of their error (bounded,
    untrusted: written by the code under test)."""
    skips: dict[TestId, str] = Field(default_factory=dict)
    """Tests that skipped themselves, with the first line of pytest's reason (untrusted:
    written by the code under test)."""
    crashes: dict[PlainTestId, str] = Field(default_factory=dict)
    """Tests that killed pytest, with how (``crashed (signal 11)``): each is ``failed`` in
    ``outcomes``, and the other tests were run again without it."""
    detail: str = ""
    """The end of pytest's output, kept when the run did not end cleanly."""
    tampering: list[str] = Field(default_factory=list)
    """Why the run is ``tampered``: a canary, the outcome stream, pytest changed under the
    tests, or the patch's source found doing what a fix has no reason to do."""


OracleStatus = Literal["ok", "no-fail-to-pass", "environment-error"]


class AddedDependency(Record):
    """A test dependency added to the environment: one the tests import but the project
    never declared, or one its ``setup.py`` declares only when it runs."""

    requirement: str
    module: str = ""
    """The module the tests could not import."""
    imported_by: str = ""
    """The file that imports it, relative to the tree."""
    declared_by: str = ""
    """Where running the project's metadata found it (``setup.py``), when not imported."""

    @property
    def note(self) -> str:
        """``added simplejson: imported by tests/base.py, not declared as a test dependency``."""
        if self.declared_by:
            return (
                f"added {self.requirement}: declared by {self.declared_by} when it runs, "
                "not as a literal"
            )
        return (
            f"added {self.requirement}: imported by {self.imported_by}, "
            "not declared as a test dependency"
        )


class Exemption(Record):
    """A dependency resolved without the era's date cap, because every release a newer
    release of a package that matters needs is dated after it."""

    name: str
    until: str
    """The date its releases are capped at instead (the day after its first fit)."""
    reason: str
    """Why, e.g. ``all releases after the date``."""
    needed_by: str
    """The release that needs it, e.g. ``pytest 5.2.1``."""


class Oracle(Versioned):
    """A task's ground truth, computed from the maintainers' tests before and after the fix."""

    task_id: str
    key: str = ""
    """What determined it (tests run, environment): a changed key means recompute."""
    status: OracleStatus
    fail_to_pass: list[TestId] = Field(default_factory=list)
    pass_to_pass: list[TestId] = Field(default_factory=list)
    unstable: list[TestId] = Field(default_factory=list)
    fail_on_base: list[TestId] = Field(default_factory=list)
    """Tests that fail both before and after the fix: pre-existing failures."""
    environment: str = ""
    """The description of the environment the tests ran in."""
    environment_key: str = ""
    """That environment's key
    (:attr:`bugbout.core.plumbing.environments.environment.Environment.key`)."""
    revision: str = ""
    """How its builder resolved that environment then: a stored oracle of another revision
    is kept only when the builder resolves the task's environment to the same key now."""
    reason: str | None = None
    runs: list[TestRun] = Field(default_factory=list)
    added: list[AddedDependency] = Field(default_factory=list)
    """Test dependencies added to the environment because the tests import them
    (``tasks.repair-imports``)."""
    versions: dict[str, str] = Field(default_factory=dict)
    """The resolved versions that matter: ``python``, pytest and its plugins, the
    project's direct dependencies (empty: the environment does not say)."""
    exempt: list[Exemption] = Field(default_factory=list)
    """Dependencies exempted from the era's date so that a newer release could resolve."""
    suite: list[FileName] = Field(default_factory=list)
    """Where the repository's tests were at the fix, when not (only) at ``project.tests``
    (:func:`bugbout.core.plumbing.testruns.suite.suite_paths`)."""
    sweep: str = ""
    """The sweep (its directory) whose job computed it; empty outside a sweep. The
    sweep's later jobs take its environment error as it is instead of trying again."""


def suite_note(status: str, suite: list[str]) -> str:
    """``status`` with where the task's tests were, when not at ``project.tests``
    (:attr:`Oracle.suite`)."""
    where = f"tests in {', '.join(suite)}" if suite else ""
    return ", ".join(part for part in (status, where) if part)


class OracleSet(RecordRoot[dict[str, Oracle]]):
    """Every task's oracle, by task id, as stored in ``oracles.json``."""

    root: dict[str, Oracle] = Field(default_factory=dict)


def digest(*parts: str) -> str:
    """A short, stable key for the values that determine a record."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:16]
