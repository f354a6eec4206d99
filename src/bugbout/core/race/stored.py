"""The attempts a task's verdicts read besides each contestant's last: the retry rounds
before it and the later repeats, as the store keeps them."""

from __future__ import annotations

from bugbout.core.evidence import with_earlier_rounds
from bugbout.core.race.contestants import Contestant, with_repeats
from bugbout.core.store.race_records import Attempt
from bugbout.core.store.records import Task
from bugbout.core.store.store import Store


def earlier_rounds(store: Store, task: Task, racers: list[Contestant]) -> list[Attempt]:
    """The contestants' retry rounds on ``task`` before their last."""
    return [
        attempt
        for racer in racers
        if racer.role == "contestant"
        for name in with_earlier_rounds(store, racer.path(task))[:-1]
        if (attempt := store.read(name, Attempt)) is not None
    ]


def repeats_of(store: Store, task: Task, racers: list[Contestant], repeats: int) -> list[Attempt]:
    """The contestants' stored attempts on ``task`` of repeats 2..``repeats``, each its
    last round."""
    return [
        attempt
        for racer in with_repeats(racers, repeats)
        if racer.repeat > 1
        if (attempt := store.read(racer.path(task), Attempt)) is not None
    ]
