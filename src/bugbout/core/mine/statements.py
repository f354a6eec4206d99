"""The statements of tasks that name no issue, once their ground truth ran.

Each is first its scrubbed statement (:mod:`bugbout.core.mine.reported`). With
``tasks.statement: drafted``, the drafter's model writes one from it; a draft that leaks
the fix (:mod:`bugbout.core.mine.leaks`) is refused, and one the model could not give is
not waited for (after three failures in a row, it is asked no more): the task keeps its
scrubbed statement, its origin saying why. Drafts are kept in ``drafts.json`` under the
key of the model and its input, so a resumed bout never drafts one again.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings
from bugbout.core.mine.drafting import Drafter, DraftingFailed
from bugbout.core.mine.injection import TIER as INJECTED
from bugbout.core.mine.leaks import Secrets, leak
from bugbout.core.mine.reported import Parents, fix_only, is_told_by_failures, told
from bugbout.core.plumbing.git import Git
from bugbout.core.store.drafts import DRAFTS, SCRUBBED, Draft, Drafts
from bugbout.core.store.records import OracleSet, Task, TaskSet
from bugbout.core.store.store import Store

GIVE_UP = 3
"""Failures in a row after which a bout asks its drafter no more."""


def tell_statements(
    settings: BoutSettings,
    plugins: Plugins,
    store: Store,
    tasks: TaskSet,
    oracles: OracleSet,
    *,
    warn: Callable[[str], None],
) -> None:
    """Give each task that names no issue its statement and its origin: scrubbed, with
    the failures its ground truth saw before the fix, or drafted from that."""
    told_tasks = [task for task in tasks.tasks if is_told_by_failures(task) or _injected(task)]
    if not told_tasks:
        return
    drafter = Drafter.of(settings, plugins) if settings.tasks.statement == "drafted" else None
    store.set_aside_if_corrupt(DRAFTS, Drafts, warn)
    drafts = store.read(DRAFTS, Drafts) or Drafts()
    with Git(settings.repository) as git:
        parents = Parents(git)
        for task in told_tasks:
            oracle = oracles.root.get(task.id)
            if _injected(task):  # told when it was mined: its draft keeps what it was
                kept = drafts.root.get(task.id)
                if task.drafted and kept is not None:
                    task.problem_statement = kept.reported
            elif oracle is not None:  # its message without what the fix's code shows
                fix = fix_only(git, task, parents)
                leaks = Secrets.of(git, task, fix).shown_in
                task.problem_statement = told(git, task, oracle, leaks=leaks, fix=fix)
                task.statement_origin = SCRUBBED
        if drafter is not None:
            drafting = _Drafting(drafter, git, store, drafts, warn)
            drafting.give([task for task in told_tasks if task.scored], settings.tasks.jobs)


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
        with ThreadPoolExecutor(max_workers=at_once, thread_name_prefix="drafting") as pool:
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
    return task.tier == INJECTED
