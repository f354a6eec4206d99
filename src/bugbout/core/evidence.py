"""The store's evidence shared by every bout and sweep job (matrices, scores, audits, by
the key that determines them), and the retry rounds kept beside an attempt."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from bugbout.core.crossexam.affected import BaseRun
from bugbout.core.race.contestants import Contestant
from bugbout.core.store.records import (
    Attempt,
    Audit,
    Matrix,
    Oracle,
    OracleSet,
    Resolution,
    Task,
    TaskSet,
    digest,
)
from bugbout.core.store.store import EVIDENCE, Store

"""Where the store keeps test-run records any bout may reuse (by task and key)."""


_Shareable = TypeVar("_Shareable", Matrix, Resolution, Audit, BaseRun)


@dataclass(frozen=True)
class Shared:
    """The store's evidence for one task, shared by every bout and sweep job on the store:
    a matrix, a score or an audit under the key that determines it, with the task's
    ground truth (a recomputed oracle makes them stale)."""

    store: Store
    task: Task
    oracle: Oracle

    def path(self, kind: str, key: str) -> str:
        return f"{EVIDENCE}/{self.task.id}/{kind}-{digest(key, self.oracle.key)[:16]}.json"

    def read(self, kind: str, model: type[_Shareable], key: str) -> _Shareable | None:
        found = self.store.read(self.path(kind, key), model)
        return found if found is not None and found.key == key else None

    def write(self, kind: str, record: Matrix | Resolution | Audit | BaseRun, key: str) -> None:
        self.store.write(self.path(kind, key), record)


def with_earlier_rounds(store: Store, name: str) -> list[str]:
    """An attempt's record and its earlier rounds' (``<key>.roundN.json``), oldest first."""
    path = store.path(name)
    rounds = sorted(
        path.parent.glob(f"{path.stem}.round*.json"),
        key=lambda p: int(p.name.removesuffix(".json").rsplit("round", 1)[1]),
    )
    return [str(p.relative_to(store.root)) for p in rounds] + [name]


def earlier_rounds(store: Store, task: Task, racers: list[Contestant]) -> list[Attempt]:
    """The contestants' retry rounds on ``task`` before their last."""
    return [
        attempt
        for racer in racers
        if racer.role == "contestant"
        for name in with_earlier_rounds(store, racer.path(task))[:-1]
        if (attempt := store.read(name, Attempt)) is not None
    ]


def round_scores(
    store: Store, tasks: TaskSet, oracles: OracleSet, attempts: list[Attempt]
) -> list[Resolution]:
    """The stored scores of the retry rounds before each contestant's last."""
    last: dict[tuple[str, str], int] = {}
    for a in attempts:
        key = (a.task_id, a.contestant)
        last[key] = max(last.get(key, a.round), a.round)
    by_id = {task.id: task for task in tasks.tasks}
    found = []
    for a in attempts:
        task, oracle = by_id.get(a.task_id), oracles.root.get(a.task_id)
        if a.role != "contestant" or a.round == last[(a.task_id, a.contestant)]:
            continue
        if task is not None and oracle is not None:
            resolution = Shared(store, task, oracle).read("score", Resolution, a.revision)
            found += [resolution] if resolution is not None else []
    return found
