"""Records made by threads: a record class is built on first use, which pydantic does not
do safely while another thread makes one of it (a bout under load lost an attempt so).
The thread pools of the race, the cross-examination, the verdict jobs and the statements
build every record class imported first, then their threads make records at will."""

from __future__ import annotations

import threading

from bugbout.core.store.records import Record, record_threads


def _classes(root: type) -> list[type]:
    found, pending = [], [root]
    while pending:
        for subclass in pending.pop().__subclasses__():
            found.append(subclass)
            pending.append(subclass)
    return found


class Inner(Record):
    name: str
    count: int = 0


class Outer(Record):
    label: str
    inner: list[Inner]


def test_a_pool_of_record_threads_starts_with_every_record_class_built() -> None:
    import bugbout.core.verdicts  # noqa: F401  (the records of a whole bout)

    with record_threads(2):
        pass
    assert [c.__name__ for c in _classes(Record) if not c.__pydantic_complete__] == []


def test_threads_that_start_at_once_make_right_records() -> None:
    class Late(Record):
        name: str
        inner: Inner

    start = threading.Barrier(8)

    def make(number: int) -> Late:
        start.wait()
        return Late.model_validate({"name": str(number), "inner": {"name": "x", "count": number}})

    with record_threads(8) as pool:
        made = list(pool.map(make, range(8)))
    assert [(late.name, late.inner.count) for late in made] == [(str(n), n) for n in range(8)]
