"""The store's evidence shared by every bout and sweep job (base runs, matrices, scores,
audits), each under a key derived here from what it is computed from, the retry
rounds kept beside an attempt, and a contestant's repeats."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from bugbout.core.contract.settings import PluginChoice, TestLimitsSettings, VerdictsSettings
from bugbout.core.plumbing.selection.affected import MAP_VERSION, BaseRun
from bugbout.core.plumbing.testruns.timeouts import killed
from bugbout.core.store.race_records import Attempt, Audit
from bugbout.core.store.records import Oracle, OracleSet, Task, TaskSet, TestRun, digest
from bugbout.core.store.store import EVIDENCE, Store
from bugbout.core.store.verdict_records import Matrix, PatchResolution

_Shareable = TypeVar("_Shareable", Matrix, PatchResolution, Audit, BaseRun)

_FIX = {"sha", "parent", "test_files", "changed_test_files", "deleted_test_files"}
"""What of a task its test runs read: the fix's commits and its test files."""


def task_key(task: Task, oracle: Oracle) -> str:
    """What every test run of ``task`` is computed from, whatever the bout's settings: the
    fix (its commits, its test files) and the ground truth with the environment it ran
    in (the oracle's key, which holds the environment's and the project's settings; the
    environment's description, its resolved versions and the dependencies it added)."""
    truth = oracle.model_dump_json(exclude={"runs", "sweep"})
    return digest(task.model_dump_json(include=_FIX), truth)


def score_key(task: Task, oracle: Oracle, attempt: Attempt) -> str:
    """A patch's score: the task, its ground truth and the attempt's revision (its patch,
    how it ended, who made it). The timeout is left out, so the report finds a retry
    round's score without the bout's settings; :func:`ends_alike` checks it instead."""
    return digest("score", task_key(task, oracle), attempt.revision)


def ends_alike(run: TestRun | None, timeout: float) -> bool:
    """Whether ``run`` would have ended as it did under ``timeout``: it ended before it,
    or was killed at a timeout no shorter (no run, or a kill that names no timeout:
    nothing to compare)."""
    if run is None:
        return True
    how = killed(run)
    if not how:
        return run.duration < timeout
    seconds = re.search(r"[0-9]+(\.[0-9]+)?", how)
    return seconds is None or timeout <= float(seconds[0])


@dataclass(frozen=True)
class EvidenceSpec:
    """What the evidence of a bout is computed under: the ``verdicts:`` settings, the
    auditor with its options, and how test runs are confined (the sandbox with its
    options, and ``limits.tests``)."""

    verdicts: VerdictsSettings
    auditor: PluginChoice
    sandbox: PluginChoice
    test_limits: TestLimitsSettings

    @property
    def confinement(self) -> str:
        """How every test run is confined. A run under another sandbox or other limits
        may end otherwise (a limit it now breaks), so its evidence is not reused."""
        sandbox = self.sandbox.model_dump_json()
        return digest("confinement", sandbox, self.test_limits.model_dump_json())


@dataclass(frozen=True)
class EvidenceKeys:
    """The keys of one task's evidence under a bout's :class:`EvidenceSpec`, each derived
    from what it is computed from, so a changed input never reuses a stale record."""

    task: Task
    oracle: Oracle
    spec: EvidenceSpec
    suite: tuple[str, ...]
    """Where the task's suite was at its commit."""

    @property
    def base(self) -> str:
        """The base run: the task, its ground truth and environment, where its suite was,
        the ``verdicts:`` settings that change how it runs (which tests, the timeout), how
        test runs are confined, and the coverage map's format."""
        verdicts = self.spec.verdicts.key()
        truth, confined = task_key(self.task, self.oracle), self.spec.confinement
        return digest("base", MAP_VERSION, truth, verdicts, confined, *self.suite)

    def matrix(self, attempts: Sequence[Attempt]) -> str:
        """The matrix: the base run's inputs (its selections come from it), whether the
        suite runs, and every examined attempt's revision (each author's tests, each
        contestant's patch)."""
        run_suite = f"run-suite={self.spec.verdicts.run_suite}"
        return digest("matrix", self.base, run_suite, *sorted(a.revision for a in attempts))

    def score(self, attempt: Attempt) -> str:
        return score_key(self.task, self.oracle, attempt)

    @property
    def confinement(self) -> str:
        """What a stored score must have been computed under to be reused (its key leaves
        it out, as it does the timeout, so the report finds it without the settings)."""
        return self.spec.confinement

    def audit(self, attempt: Attempt) -> str:
        """An audit: the base run's inputs (its baseline and selection), the auditor with
        its options, and the attempt's revision."""
        auditor = self.spec.auditor.model_dump_json()
        return digest("audit", self.base, auditor, attempt.revision)


@dataclass(frozen=True)
class Shared:
    """The store's evidence for one task, shared by every bout and sweep job on the store,
    each record under its key (:class:`EvidenceKeys`)."""

    store: Store
    task: Task

    def path(self, kind: str, key: str) -> str:
        return f"{EVIDENCE}/{self.task.id}/{kind}-{key}.json"

    def read(
        self, kind: str, model: type[_Shareable], key: str, *, holds: str | None = None
    ) -> _Shareable | None:
        """The record stored under ``key``, when it is the task's and holds ``holds``
        (by default ``key``; a score holds its attempt's revision)."""
        found = self.store.read(self.path(kind, key), model)
        if found is None or found.task_id != self.task.id or found.key != (holds or key):
            return None
        return found

    def once(
        self,
        kind: str,
        model: type[_Shareable],
        key: str,
        make: Callable[[], _Shareable | None],
        *,
        holds: str | None = None,
        usable: Callable[[_Shareable], bool] = lambda found: True,
    ) -> tuple[_Shareable | None, bool]:
        """The record under ``key``, read from the store (when ``usable``) or else made by
        ``make`` and written, under the record's lock: jobs needing it at once make it
        once, the others wait and read it. Also whether it was made now (``make`` may
        make nothing)."""
        found = self.read(kind, model, key, holds=holds)
        if found is not None and usable(found):
            return found, False
        path = self.path(kind, key)
        with self.store.hold(path):
            found = self.read(kind, model, key, holds=holds)
            if found is not None and usable(found):
                return found, False
            made = make()
            if made is not None:
                self.store.write(path, made)
            return made, True


def with_earlier_rounds(store: Store, name: str) -> list[str]:
    """An attempt's record and its earlier rounds' (``<key>.roundN.json``), oldest first."""
    path = store.path(name)
    rounds = sorted(
        path.parent.glob(f"{path.stem}.round*.json"),
        key=lambda p: int(p.name.removesuffix(".json").rsplit("round", 1)[1]),
    )
    return [str(p.relative_to(store.root)) for p in rounds] + [name]


def round_scores(
    store: Store, tasks: TaskSet, oracles: OracleSet, attempts: list[Attempt]
) -> list[PatchResolution]:
    """The stored scores of the retry rounds before each contestant's last."""
    last: dict[tuple[str, str], int] = {}
    for a in attempts:
        key = (a.task_id, a.contestant)
        last[key] = max(last.get(key, a.round), a.round)
    earlier = [
        a for a in attempts if a.role == "contestant" and a.round != last[(a.task_id, a.contestant)]
    ]
    return stored_scores(store, tasks, oracles, earlier)


def stored_scores(
    store: Store, tasks: TaskSet, oracles: OracleSet, attempts: list[Attempt]
) -> list[PatchResolution]:
    """The stored score of each of ``attempts`` that has one."""
    by_id = {task.id: task for task in tasks.tasks}
    found = []
    for a in attempts:
        task, oracle = by_id.get(a.task_id), oracles.root.get(a.task_id)
        if task is not None and oracle is not None:
            shared = Shared(store, task)
            resolution = shared.read(
                "score", PatchResolution, score_key(task, oracle, a), holds=a.revision
            )
            found += [resolution] if resolution is not None else []
    return found
