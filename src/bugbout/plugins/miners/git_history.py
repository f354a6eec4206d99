"""The ``git-history`` miner: the changes on the first-parent history that come with
tests (a maintenance line merged forward: each of its commits), each task of a tier
(``miner.tiers``): fixes that name an issue (``issue-fix``) or none (``fix``) and add a
test, fixes that change existing tests (``modified-test``), and changes that are not
fixes but add tests (``feature``)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from pydantic import Field, field_validator

from bugbout.miners import (
    DEFAULT_FIX_WORDS,
    DEFAULT_SAME_BEHAVIOUR_TYPES,
    DEFAULT_SAME_BEHAVIOUR_WORDS,
    HISTORY_TIERS,
    ROOT_TEST_MODULES,
    Change,
    Commit,
    Git,
    IssueRef,
    MinerPlugin,
    MiningRequest,
    Options,
    Task,
    TaskIssue,
    TaskSet,
    TitleLookup,
    TitleReading,
    added_tests,
    changed_tests,
    code_changed,
    create_plugin,
    first_parent_walk,
    hookimpl,
    issue_references,
)
from bugbout.test_runners import TestRunnerPlugin

if TYPE_CHECKING:
    from bugbout.test_runners import ProjectSettings, TestRunner

# Why an examined commit was left out, in the order the rules are checked.
NOT_A_FIX = "not-a-fix"
NO_ISSUE_REFERENCE = "no-issue-reference"
ROOT_COMMIT = "root-commit"
NO_SOURCE_CHANGE = "no-source-change"
TOO_MANY_SOURCE_FILES = "too-many-source-files"
NO_CODE_CHANGE = "no-code-change"
DEFAULT_TIERS = ("issue-fix", "fix", "feature")
"""The tiers kept unless chosen: ``modified-test`` is left out, as most fixes that only
edit tests turn out to have no test that fails before them (docs/mining.md#tiers)."""
NO_TEST_ADDED = "no-test-added"
DUPLICATE_ISSUE = "duplicate-issue"
SAME_BEHAVIOUR = "same-behaviour"
OVER_LIMIT = "over-limit"
TIER_LEFT_OUT = "tier-left-out"


class GitHistoryOptions(Options):
    """Options of the ``git-history`` miner (``miner:``): which fixes become tasks."""

    ref: str | None = None
    """The branch or ref to walk; the default branch when unset."""
    since: str | None = None
    """Only fixes committed after this date (ISO 8601, e.g. ``2023-01-01``)."""
    limit: int | None = Field(default=20, ge=1)
    """The most tasks kept, newest first; ``None``: every task of the whole history."""
    max_source_files: int = Field(default=2, ge=1)
    """Fixes that change more source files than this are left out."""
    fix_words: tuple[str, ...] = DEFAULT_FIX_WORDS
    """Words (or their inflections) a fix's title must contain."""
    tiers: tuple[str, ...] = DEFAULT_TIERS
    """The kinds of task kept, of ``issue-fix``, ``fix``, ``modified-test``, ``feature``."""
    same_behaviour_types: tuple[str, ...] = DEFAULT_SAME_BEHAVIOUR_TYPES
    """Conventional Commits types (``refactor: ...``) of titles that are no ``feature``: a
    commit so titled that does not read like a fix is left out (``[]`` keeps them)."""
    same_behaviour_words: tuple[str, ...] = DEFAULT_SAME_BEHAVIOUR_WORDS
    """Words that begin a title (or each of its clauses) that says the change keeps what
    the code does (``Minor refactors``, ``Add tests for ...``): such a commit is no
    ``feature``, nor a ``fix`` when its fix words are all about the tests (``Fix test
    commands``); ``[]`` keeps them."""
    source_suffixes: tuple[str, ...] = (".py",)
    """How the package's source files end: a change to another file under its directories
    (data, documentation) is not a change to its source. A JavaScript or TypeScript
    project's: ``[.js, .mjs, .cjs, .jsx, .ts, .mts, .cts, .tsx]``."""

    @field_validator("tiers")
    @classmethod
    def _tiers(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [tier for tier in value if tier not in HISTORY_TIERS]
        if unknown or not value:
            raise ValueError(f"must be a list of {', '.join(HISTORY_TIERS)}, not {list(value)}")
        return value

    @field_validator("since", mode="before")
    @classmethod
    def _date(cls, value: object) -> str | None:
        if isinstance(value, date):
            return value.isoformat()
        if value is not None:
            value = str(value)
            try:
                datetime.fromisoformat(value)
            except ValueError:
                raise ValueError("must be a date such as 2023-01-01") from None
        return value


@hookimpl
def bugbout_miners() -> Iterator[MinerPlugin]:
    yield MinerPlugin(
        name="git-history",
        factory=GitHistoryMiner,
        options=GitHistoryOptions,
        description="changes on the first-parent history that come with tests, by tier",
    )


@dataclass
class _Candidate:
    commit: Commit
    title: str
    issue: IssueRef | None
    source_files: list[str]
    changes: list[Change]
    """Its changes to source files."""
    fix: bool
    """Whether its title reads like a fix (else it may be a ``feature``)."""
    sources: dict[str, bytes | None] = field(default_factory=dict)
    """The contents of its edited source files, by blob (read with its test modules)."""


class GitHistoryMiner:
    """Walks the first-parent history once, newest first, applying the rules in order."""

    def __init__(self, options: GitHistoryOptions | None = None) -> None:
        self.options = options or GitHistoryOptions()

    def head(self, request: MiningRequest) -> str:
        """The commit id of the ref this miner walks."""
        with Git(request.repository) as git:
            return self._ref(git)

    def _ref(self, git: Git) -> str:
        return git.resolve(self.options.ref or git.default_ref())

    def mine(
        self,
        request: MiningRequest,
        titles: TitleLookup | None = None,
        runner: TestRunner | None = None,
    ) -> TaskSet:
        settings = self.options
        reading = TitleReading.of(
            settings.fix_words, settings.same_behaviour_types, settings.same_behaviour_words
        )
        if runner is None:
            choice = request.test_runner
            runner = create_plugin(TestRunnerPlugin, choice.name, choice.options)
        layout = _Layout(request.project, runner, settings.source_suffixes)
        since = _parse_since(settings.since)
        result = TaskSet()
        claimed: set[int] = set()
        tests_cache: dict[str, dict[str, int | None]] = {}
        with Git(request.repository) as git:
            ref = self._ref(git)
            checked = (
                self._check(
                    commit,
                    reading=reading,
                    layout=layout,
                    settings=settings,
                    titles=titles,
                    github=request.github,
                )
                if not left_out
                else (None, left_out)
                for commit, left_out in first_parent_walk(git, ref, since=since)
            )
            for candidate, reason in _read_ahead(git, layout, checked, tests_cache):
                result.examined += 1
                if candidate is None:
                    result.exclude(reason)
                    continue
                task, reason = _task_if_tested(
                    git, candidate, layout, tests_cache, tiers=settings.tiers
                )
                if task is None:
                    result.exclude(reason)
                    continue
                if task.issue.number in claimed:
                    result.exclude(DUPLICATE_ISSUE)
                    continue
                over = settings.limit is not None and len(result.tasks) >= settings.limit
                if not over and not _code_changed(candidate):
                    result.exclude(NO_CODE_CHANGE)  # its issue stays free for an older fix
                    continue
                if reading.keeps_behaviour(task.title):
                    result.exclude(SAME_BEHAVIOUR)
                    continue
                if task.issue.number:
                    claimed.add(task.issue.number)
                if over:
                    result.exclude(OVER_LIMIT)
                else:
                    result.tasks.append(task)
        return result

    def _check(
        self,
        commit: Commit,
        *,
        reading: TitleReading,
        layout: _Layout,
        settings: GitHistoryOptions,
        titles: TitleLookup | None,
        github: str | None,
    ) -> tuple[_Candidate | None, str]:
        """The cheap rules, from the log alone: title, issue, source files (a commit that
        no chosen tier could take is left out here)."""
        pr_title = _pull_request_title(commit) if commit.is_merge else None
        if reading.is_fix(commit.subject):  # a title that names a fix keeps its own words
            matched, title = True, commit.subject
        else:
            matched = bool(pr_title and reading.is_fix(pr_title))
            title = pr_title or commit.subject
        tiers = settings.tiers
        may_look_up = commit.is_merge and not pr_title and titles is not None
        if not matched and not may_look_up and "feature" not in tiers:
            return None, NOT_A_FIX  # the common case: no need to read references
        refs = issue_references(commit.subject, commit.body, repository=github)
        if not matched and refs and titles is not None:
            looked_up = titles(refs[0].number)
            if looked_up and reading.is_fix(looked_up):
                matched, title = True, looked_up
        if not matched and "feature" not in tiers:
            return None, NOT_A_FIX
        if matched and not refs and not {"fix", "modified-test"} & set(tiers):
            return None, NO_ISSUE_REFERENCE
        if not commit.parents:
            return None, ROOT_COMMIT
        changes = [c for c in commit.changes if layout.is_source(c)]
        source_files = sorted({c.path for c in changes})
        if not source_files:
            return None, NO_SOURCE_CHANGE
        if len(source_files) > settings.max_source_files:
            return None, TOO_MANY_SOURCE_FILES
        issue = refs[0] if refs else None
        return _Candidate(commit, title, issue, source_files, changes, fix=matched), ""


class _Layout:
    """Which paths are the package's source (files of its ``suffixes`` under any of its
    directories, or the module of the same name: a package that began as one module) and
    which are tests (under its tests' directory, or test files of its ``runner``)."""

    def __init__(
        self, project: ProjectSettings, runner: TestRunner, suffixes: tuple[str, ...]
    ) -> None:
        self.runner = runner
        self.source = tuple(path.rstrip("/") + "/" for path in project.source)
        self.suffixes = suffixes
        self.modules = frozenset(
            path.rstrip("/") + suffix for path in project.source for suffix in suffixes
        )
        self.tests = project.tests.rstrip("/") + "/"

    def is_test(self, path: str) -> bool:
        name = PurePosixPath(path).name
        return path.startswith(self.tests) or name == "conftest.py" or self.is_test_file(path)

    def is_test_file(self, path: str) -> bool:
        """A file of tests: one the runner collects, or a single module at the root."""
        return self.runner.is_test_file(path) or path in ROOT_TEST_MODULES

    def is_parsed(self, change: Change) -> bool:
        """A test file the commit left in place: its tests are read before and after."""
        return change.status != "D" and self.is_test_file(change.path)

    def is_source(self, change: Change) -> bool:
        paths = [change.path] if change.old_path is None else [change.path, change.old_path]
        return any(
            (p.startswith(self.source) or p in self.modules)
            and p.endswith(self.suffixes)
            and not self.is_test(p)
            for p in paths
        )


def _pull_request_title(commit: Commit) -> str | None:
    """A merge's pull request title: the first non-empty line of its body."""
    for line in commit.body.splitlines():
        if line.strip():
            return line.strip()
    return None


def _task_if_tested(
    git: Git,
    candidate: _Candidate,
    layout: _Layout,
    cache: dict[str, dict[str, int | None]],
    *,
    tiers: tuple[str, ...],
) -> tuple[Task | None, str]:
    """The task, of the first of its tiers chosen in ``tiers``, when the change added a
    test (found by parsing the test files before and after) or, a fix, changed one; or
    why it is left out."""
    commit = candidate.commit
    parent = commit.parents[0]
    changed: list[str] = []
    deleted: list[str] = []
    added: list[str] = []
    modules: list[tuple[str, str | None, str | None]] = []
    for change in commit.changes:
        if change.old_path is not None and layout.is_test(change.old_path):
            deleted.append(change.old_path)
        if not layout.is_test(change.path):
            continue
        if change.status == "D":
            deleted.append(change.path)
            continue
        changed.append(change.path)
        if layout.is_parsed(change):
            modules.append((change.path, change.old_blob, change.blob))
    _read_tests(git, layout, modules, cache)
    for path, old_blob, blob in modules:
        before = cache[old_blob] if old_blob is not None else {}
        after = cache[blob] if blob is not None else {}
        added.extend(f"{path}::{name}" for name in added_tests(before, after))
    may_modify = candidate.fix and "modified-test" in tiers
    modified = [] if added or not may_modify else _modified(git, modules)
    if not added and not modified:
        return None, NO_TEST_ADDED
    tier = _tier(candidate, bool(added))
    if tier not in tiers:
        return None, NO_ISSUE_REFERENCE if tier == "fix" else TIER_LEFT_OUT
    issue = candidate.issue
    task = Task(
        id=Task.id_for(commit.sha),
        tier=tier,
        sha=commit.sha,
        parent=parent,
        date=commit.date,
        title=candidate.title,
        issue=TaskIssue(number=issue.number, url=issue.url) if issue else TaskIssue(number=0),
        source_files=candidate.source_files,
        test_files=sorted(p for p in changed if layout.is_test_file(p)),
        changed_test_files=sorted(changed),
        deleted_test_files=sorted(deleted),
        added_tests=added,
        modified_tests=modified,
    )
    return task, ""


def _tier(candidate: _Candidate, added: bool) -> str:
    """The kind of change ``candidate`` is, given whether it added a test."""
    if not candidate.fix:
        return "feature"
    if not added:
        return "modified-test"
    return "issue-fix" if candidate.issue else "fix"


def _modified(git: Git, modules: list[tuple[str, str | None, str | None]]) -> list[str]:
    """The tests whose code changed in test files ``modules`` (``(path, old blob, new
    blob)``)."""
    found: list[str] = []
    for path, old, new in modules:
        if old is None or new is None:
            continue
        names = changed_tests(git.content(old), git.content(new))
        found.extend(f"{path}::{name}" for name in names)
    return found


READ_AHEAD = 64
"""Candidates whose test modules are read from git together, ahead of their turn."""


def _read_ahead(
    git: Git,
    layout: _Layout,
    checked: Iterator[tuple[_Candidate | None, str]],
    cache: dict[str, dict[str, int | None]],
) -> Iterator[tuple[_Candidate | None, str]]:
    """``checked`` unchanged, but the test files of the next :data:`READ_AHEAD`
    candidates are read and parsed into ``cache`` in one batch before they are yielded:
    one round trip to git for many fixes, not one for each."""
    held: list[tuple[_Candidate | None, str]] = []
    waiting = 0
    for item in checked:
        held.append(item)
        waiting += item[0] is not None
        if waiting == READ_AHEAD:
            yield from _released(git, layout, held, cache)
            held, waiting = [], 0
    yield from _released(git, layout, held, cache)


def _released(
    git: Git,
    layout: _Layout,
    held: list[tuple[_Candidate | None, str]],
    cache: dict[str, dict[str, int | None]],
) -> list[tuple[_Candidate | None, str]]:
    """``held``, once the test files of its candidates are in ``cache`` and the source
    files edited by those that change tests are read: one batch (the commits left out
    hold only their reason, so a long gap between fixes costs little)."""
    candidates = [candidate for candidate, _ in held if candidate is not None]
    tests = {
        blob: change.path
        for candidate in candidates
        for change in candidate.commit.changes
        if layout.is_parsed(change)
        for blob in (change.old_blob, change.blob)
        if blob is not None and blob not in cache
    }
    tested = [
        candidate
        for candidate in candidates
        if any(layout.is_parsed(change) for change in candidate.commit.changes)
    ]
    sources = [
        blob
        for candidate in tested
        for change in candidate.changes
        if _is_edited(change)
        for blob in (change.old_blob, change.blob)
        if blob is not None
    ]
    found = git.contents([*tests, *sources])
    for blob, path in tests.items():
        cache[blob] = layout.runner.defined_tests(path, found[blob])
    for candidate in tested:  # one that leaves its tests alone is no task either way
        candidate.sources = {
            blob: found[blob]
            for change in candidate.changes
            if _is_edited(change)
            for blob in (change.old_blob, change.blob)
            if blob is not None
        }
    return held


def _code_changed(candidate: _Candidate) -> bool:
    """Whether a change to one of ``candidate``'s source files changes its code, not
    only its docstrings, comments or layout: asked only of a task about to be kept, as
    compiling its modules costs more than every other rule."""
    return any(
        not _is_edited(change)
        or code_changed(
            candidate.sources.get(change.old_blob or ""), candidate.sources.get(change.blob or "")
        )
        for change in candidate.changes
    )


def _is_edited(change: Change) -> bool:
    """A source file edited in place, whose code may not have changed: one added,
    deleted, renamed or of another type always did."""
    return change.status == "M" and change.blob is not None and change.old_blob is not None


def _read_tests(
    git: Git,
    layout: _Layout,
    files: list[tuple[str, str | None, str | None]],
    cache: dict[str, dict[str, int | None]],
) -> None:
    """Put the tests each blob of ``files`` (``(path, old blob, new blob)``) defines in
    ``cache``: the blobs not there yet are read in one batch, each parsed once."""
    missing = {
        blob: path
        for path, *blobs in files
        for blob in blobs
        if blob is not None and blob not in cache
    }
    for blob, content in git.contents(list(missing)).items():
        cache[blob] = layout.runner.defined_tests(missing[blob], content)


def _parse_since(since: str | None) -> int | None:
    """``since`` as the first whole second at or after it (UTC when it names no
    zone): commit times are whole seconds."""
    if since is None:
        return None
    moment = datetime.fromisoformat(since)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return math.ceil(moment.timestamp())
