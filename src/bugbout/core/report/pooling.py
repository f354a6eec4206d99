"""One answer over several repositories: the last bouts of their stores pooled into one
report, every rate, comparison and the decision computed over all their tasks, each
contestant's rate split by repository.

Contestants are pooled by name: a contestant raced in one repository only is scored on
that repository's tasks. A task's id is its fix commit's: two repositories holding the
same commit (a fork, a vendored copy) cannot be pooled, since its evidence would count
twice.
"""

from __future__ import annotations

from collections.abc import Sequence

from bugbout.core.contract.errors import BugboutError
from bugbout.core.contract.transcript import TranscriptReader
from bugbout.core.report.costs import PriceTable
from bugbout.core.report.report import Report
from bugbout.core.report.report_store import BoutRecords, read_bout, running
from bugbout.core.store.records import OracleSet, TaskSet
from bugbout.core.store.store import Store


def pooled_report(
    bouts: Sequence[tuple[str, Store]],
    prices: PriceTable | None = None,
    *,
    transcript: TranscriptReader | None = None,
) -> Report:
    """The report over the last bout of each ``(name, store)``, with the steps
    ``transcript`` reads from each attempt's logs; a store whose bout is running, or
    that holds no bout, is refused in one line."""
    if len(bouts) < 2:
        raise BugboutError("pooling needs the bouts of two repositories or more; name them all")
    names = [name for name, _ in bouts]
    if len(set(names)) < len(names):
        raise BugboutError(f"two repositories are named alike ({', '.join(names)}); rename one")
    read: list[tuple[str, BoutRecords]] = []
    for name, store in bouts:
        busy = running(store)
        if busy is not None:
            raise BugboutError(f"{name}: {busy}; pool it when its bout ends")
        records = read_bout(store, transcript=transcript)
        if not records.attempts:
            raise BugboutError(f"{name}: no bout in {store.root}; run `bugbout run` there first")
        read.append((name, records))
    repositories: dict[str, str] = {}
    for name, records in read:
        for task in records.tasks.tasks:
            if task.id in repositories:
                raise BugboutError(
                    f"task {task.id} is in both {repositories[task.id]} and {name}: "
                    "pool each commit's repository once"
                )
            repositories[task.id] = name
    return _joined([records for _, records in read]).build(prices, repositories=repositories)


def _joined(bouts: list[BoutRecords]) -> BoutRecords:
    """The records of ``bouts`` as one bout's."""
    lists = ("attempts", "repeats", "resolutions", "verdicts", "audits", "matrices", "drafts")
    return BoutRecords(
        tasks=TaskSet(tasks=[task for b in bouts for task in b.tasks.tasks]),
        oracles=OracleSet({key: oracle for b in bouts for key, oracle in b.oracles.root.items()}),
        links={key: links for b in bouts for key, links in b.links.items()},
        cutoffs={name: cutoff for b in bouts for name, cutoff in b.cutoffs.items()},
        **{name: [x for b in bouts for x in getattr(b, name)] for name in lists},
        round_scores=[x for b in bouts for x in b.round_scores],
        repeat_scores=[x for b in bouts for x in b.repeat_scores],
    )
