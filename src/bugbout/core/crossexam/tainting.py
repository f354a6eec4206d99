"""Finding whose tests taint a cross-examination's runs, so that the damage stays with them.

Every author's test modules run in every column, so one test that meddles with pytest (a
``os.fork()`` whose child goes on reporting, a rewritten report) makes columns
``tampered``: every one, the unfixed code's included, or only the one of the patch it
means to sink. A tampered column is a patch left out, and a tampered unfixed column blinds
the judge to every patch. So each tampered column's tests are tried author by author, each
author's modules alone on that column's code, and the authors whose tests alone taint the
run are *left out* (:attr:`~bugbout.core.store.verdict_records.Matrix.left_out`, with the reasons):

- on the unfixed code, which has no patch, the tests are to blame: they are left out of
  every column;
- on a patch's code it may be the test's doing or the patch's (code that misbehaves only
  when one author's test calls it): they are left out of that column only, so neither
  gains, the patch's column standing without those cells. A column every author's tests
  taint alone is the patch's doing (a patch that meddles does so whatever runs beside
  it), and stays tampered.

The columns concerned run again without them. Tampering that no author's tests show alone
(two authors' tests only together) is not attributed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from bugbout.core.store.records import RunStatus, TestRun, record_threads
from bugbout.core.store.verdict_records import UNFIXED

Alone = Callable[[str, str], TestRun]
"""Runs one column (by name) with one author's tests alone."""
Again = Callable[[Mapping[str, frozenset[str]]], dict[str, TestRun]]
"""Runs the columns named again, each without the tests of the authors given."""


@dataclass(frozen=True)
class Isolated:
    """The columns' runs once the authors whose tests taint them are left out."""

    runs: dict[str, TestRun]
    left_out: dict[str, list[str]]
    """Each author left out, with where and why."""
    everywhere: frozenset[str]
    """The authors left out of every column: their tests are in no row."""


def isolate(
    runs: dict[str, TestRun],
    authors: Sequence[str],
    *,
    alone: Alone,
    again: Again,
    jobs: int = 1,
) -> Isolated:
    """``runs`` (every column with every author's tests) once every author whose tests
    alone taint a column is left out of it; ``jobs`` runs at once."""
    excluded: dict[str, set[str]] = {name: set() for name in runs}
    left_out: dict[str, list[str]] = {}
    blamed: set[str] = set()  # columns every author's tests taint alone: the patch's doing
    while found := _attribute(
        runs, authors, excluded=excluded, alone=alone, blamed=blamed, jobs=jobs
    ):
        column, culprits_found = found
        where = "on the unfixed code" if column == UNFIXED else f"on {column}'s patch"
        columns = list(runs) if column == UNFIXED else [column]
        for author, reasons in culprits_found.items():
            left_out.setdefault(author, []).extend(f"{where}: {why}" for why in reasons)
            for name in columns:
                excluded[name].add(author)
        runs = runs | again({name: frozenset(excluded[name]) for name in columns})
    everywhere = frozenset(a for a in authors if all(a in gone for gone in excluded.values()))
    return Isolated(runs, left_out, everywhere)


def _attribute(
    runs: dict[str, TestRun],
    authors: Sequence[str],
    *,
    excluded: dict[str, set[str]],
    alone: Alone,
    blamed: set[str],
    jobs: int,
) -> tuple[str, dict[str, list[str]]] | None:
    """The first tampered column the tests are to blame for (the unfixed code's first),
    with its culprits; ``None`` when no such column is left."""
    for name in sorted(runs, key=lambda column: column != UNFIXED):
        suspects = [author for author in authors if author not in excluded[name]]
        if runs[name].status != RunStatus.TAMPERED or name in blamed or not suspects:
            continue

        def by_author(author: str, column: str = name) -> TestRun:
            return alone(column, author)

        found = culprits(suspects, by_author, jobs=jobs)
        if name != UNFIXED and len(found) == len(suspects):
            blamed.add(name)
        elif found:
            return name, found
    return None


def culprits(
    authors: Sequence[str], alone: Callable[[str], TestRun], *, jobs: int = 1
) -> dict[str, list[str]]:
    """The authors whose tests, run alone (``alone(author)``), make the run tampered, with
    its reasons; ``jobs`` runs at once."""
    with record_threads(jobs) as pool:
        runs = dict(zip(authors, pool.map(alone, authors), strict=True))
    return {
        author: list(run.tampering) or ["its run was tampered with"]
        for author, run in runs.items()
        if run.status == RunStatus.TAMPERED
    }
