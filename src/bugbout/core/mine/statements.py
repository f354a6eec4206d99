"""The statements of tasks that name no issue, once their ground truth ran.

Each is first its scrubbed statement (:mod:`bugbout.core.mine.reported`). With
``tasks.statement: drafted``, the drafter's model writes one from it; a draft that leaks
the fix (:mod:`bugbout.core.mine.leaks`) is refused, and one the model could not give is
not waited for (after three failures in a row, it is asked no more): the task keeps its
scrubbed statement, its origin saying why. Drafts are kept in ``drafts.json`` under the
key of the model and its input, so a resumed bout never drafts one again. A scrubbed
statement is kept in ``statements.json`` under the key of what it is told from (the
fix, the failures its ground truth saw, the teller's version), so a bout whose tasks and
oracles are unchanged does not tell it again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from bugbout import __version__
from bugbout.core.mine.drafting import Drafter, DraftingFailed
from bugbout.core.mine.leaks import Secrets, leak
from bugbout.core.mine.reported import (
    Parents,
    failures_before,
    fix_only,
    is_told_by_failures,
    told,
)
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.store.drafts import DRAFTS, SCRUBBED, Draft, Drafts
from bugbout.core.store.records import (
    INJECTED_TIER,
    Oracle,
    OracleSet,
    Record,
    RecordRoot,
    Task,
    TaskSet,
    digest,
    record_threads,
)
from bugbout.core.store.store import Store

GIVE_UP = 3
"""Failures in a row after which a bout asks its drafter no more."""
STATEMENTS = "statements.json"
TELLER = "1"
"""Changes when how a scrubbed statement is told changes: a kept one is then told again."""


class Told(Record):
    """A task's scrubbed statement, under the key of what it was told from."""

    key: str
    statement: str


class ToldStatements(RecordRoot[dict[str, Told]]):
    """Every task's scrubbed statement, by task id, as stored in ``statements.json``."""

    root: dict[str, Told] = Field(default_factory=dict)


def tell_statements(
    repository: Path,
    store: Store,
    tasks: TaskSet,
    oracles: OracleSet,
    *,
    drafter: Drafter | None,
    jobs: int,
    warn: Callable[[str], None],
) -> None:
    """Give each task that names no issue its statement and its origin: scrubbed, with
    the failures its ground truth saw before the fix, or drafted from that by
    ``drafter`` (``jobs`` asked at a time). A scrubbed statement kept under the same key
    (:func:`told_key`) is not told again."""
    told_tasks = [task for task in tasks.tasks if is_told_by_failures(task) or _injected(task)]
    if not told_tasks:
        return
    store.set_aside_if_corrupt(DRAFTS, Drafts, warn)
    drafts = store.read(DRAFTS, Drafts) or Drafts()
    store.set_aside_if_corrupt(STATEMENTS, ToldStatements, warn)
    kept = store.read(STATEMENTS, ToldStatements) or ToldStatements()
    told_now = False
    with Git(repository) as git:
        parents = Parents(git)
        for task in told_tasks:
            oracle = oracles.root.get(task.id)
            if _injected(task):  # told when it was mined: its draft keeps what it was
                draft = drafts.root.get(task.id)
                if task.drafted and draft is not None:
                    task.problem_statement = draft.reported
            elif oracle is not None:  # its message without what the fix's code shows
                key = told_key(task, oracle)
                found = kept.root.get(task.id)
                if found is None or found.key != key:
                    fix = fix_only(git, task, parents)
                    leaks = Secrets.of(git, task, fix).shown_in
                    statement = told(git, task, oracle, leaks=leaks, fix=fix)
                    found = kept.root[task.id] = Told(key=key, statement=statement)
                    told_now = True
                task.problem_statement = found.statement
                task.statement_origin = SCRUBBED
        if told_now:
            store.write(STATEMENTS, kept)
        if drafter is not None:
            drafting = _Drafting(drafter, git, store, drafts, warn)
            drafting.give([task for task in told_tasks if task.scored], jobs)


def told_key(task: Task, oracle: Oracle) -> str:
    """What a task's scrubbed statement is told from: its fix (the commit, its parent,
    the files it changed), its tier, the failures its ground truth saw before the fix,
    the teller's version and bugbout's."""
    return digest(
        task.model_dump_json(
            include={"sha", "parent", "tier", "source_files", "test_files", "changed_test_files"}
        ),
        json.dumps(failures_before(oracle), sort_keys=True),
        f"teller={TELLER}",
        f"bugbout={__version__}",
    )


@dataclass
class _Drafting:
    """Drafting the statements of one bout's tasks, kept in ``drafts``. After
    :data:`GIVE_UP` failures in a row the model is asked no more: the tasks left keep
    their scrubbed statements (or their kept drafts)."""

    drafter: Drafter
    git: Git
    store: Store
    drafts: Drafts
    warn: Callable[[str], None]
    failed: list[str] = field(default_factory=list)
    """Why each drafting in a row failed (empty after one that did not)."""

    def give(self, tasks: list[Task], at_once: int) -> None:
        """Give each of ``tasks`` the statement the drafter drafts from its scrubbed one
        (``at_once`` asked at a time), unless it leaks the fix or drafting failed: then
        its origin says why."""
        waiting: list[tuple[Task, str]] = []
        for task in tasks:
            key = self.drafter.key_of(task.problem_statement)
            found = self.drafts.root.get(task.id)
            if found is not None and found.key == key:
                _use(task, found)
            else:
                waiting.append((task, key))
        waiting.reverse()  # popped from the end: in the tasks' order
        with record_threads(at_once, "drafting") as pool:
            asked: dict[Future[tuple[str, dict[str, int]]], tuple[Task, str]] = {}
            while waiting or asked:
                while waiting and len(asked) < at_once and len(self.failed) < GIVE_UP:
                    task, key = waiting.pop()
                    asked[pool.submit(self.drafter.draft, task.problem_statement)] = task, key
                if not asked:  # given up: the tasks left are not asked
                    for task, _ in waiting:
                        task.statement_origin = f"{SCRUBBED}: drafting failed: {self.failed[-1]}"
                    return
                done, _ = wait(asked, return_when=FIRST_COMPLETED)
                for future in done:
                    self._answered(*asked.pop(future), future)

    def _answered(self, task: Task, key: str, future: Future[tuple[str, dict[str, int]]]) -> None:
        """Use the draft ``future`` holds for ``task``, checked and kept; or say why not."""
        label = self.drafter.label
        try:
            text, usage = future.result()
        except DraftingFailed as exc:
            self.failed.append(str(exc))
            task.statement_origin = f"{SCRUBBED}: drafting failed: {exc}"
            self.warn(f"task {task.id}: its scrubbed statement is used, drafting failed: {exc}")
            if len(self.failed) == GIVE_UP:
                self.warn(f"{label} failed {GIVE_UP} times in a row: no more statements drafted")
            return
        self.failed.clear()
        reported = task.problem_statement
        refused = leak(text, reported, Secrets.of(self.git, task))
        found = Draft(
            key=key,
            drafter=label,
            contestant=self.drafter.name,
            model=self.drafter.model,
            reported=reported,
            text=text,
            refused=refused,
            usage=usage,
        )
        self.drafts.root[task.id] = found
        self.store.write(DRAFTS, self.drafts)
        if refused:
            self.warn(f"task {task.id}: the draft by {label} is refused: {refused}")
        _use(task, found)


def _use(task: Task, draft: Draft) -> None:
    """Give ``task`` ``draft`` as its statement, or say why it is refused."""
    if not draft.refused:
        task.problem_statement = draft.text
    task.statement_origin = draft.origin


def _injected(task: Task) -> bool:
    return task.tier == INJECTED_TIER
