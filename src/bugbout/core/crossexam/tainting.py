"""Finding whose tests taint a cross-examination's runs, so that the damage stays with them.

Every author's test modules run in every column, so one test that meddles with pytest (a
``os.fork()`` whose child goes on reporting, a rewritten report) makes columns
``tampered``: every one, the unfixed code's included, or only the one of the patch it
means to sink. A tampered column is a patch left out, and a tampered unfixed column blinds
the judge to every patch. So each tampered column's tests are tried author by author: each
author's modules run alone on that column's code, and an author whose tests alone taint
the run is *left out*: its tests are not installed, every column runs again without
them, and the matrix says why (:attr:`~bugbout.core.store.records.Matrix.left_out`).

The unfixed code has no patch, so there the tests are always to blame. A patch's column is
the patch's doing when every author's tests alone taint it (a patch that meddles does so
whatever runs beside it), and then stays tampered. Tampering no author's tests show alone
(two authors' tests only together) is not attributed either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from bugbout.core.store.records import UNFIXED, RunStatus, TestRun

LEFT_OUT = (
    "its tests were left out of the cross-examination: run alone, they tampered with the test run"
)
"""What the report says first of an author whose tests were left out."""

Alone = Callable[[str, str], TestRun]
"""Runs one column (by name) with one author's tests alone."""
Again = Callable[[list[str]], dict[str, TestRun]]
"""Runs every column again with only the authors given."""


def isolate(
    runs: dict[str, TestRun],
    authors: Sequence[str],
    *,
    alone: Alone,
    again: Again,
    jobs: int = 1,
) -> tuple[dict[str, TestRun], dict[str, list[str]]]:
    """The columns' runs once every author whose tests taint one is left out, and those
    authors with the reasons. ``runs`` are the columns run with every author's tests;
    ``jobs`` runs at once."""
    kept, left_out = list(authors), dict[str, list[str]]()
    blamed: set[str] = set()  # columns every author's tests taint alone: the patch's doing
    while found := _attribute(runs, kept, alone, blamed, jobs):
        left_out |= found
        kept = [author for author in kept if author not in found]
        runs = again(kept)
    return runs, left_out


def _attribute(
    runs: dict[str, TestRun], authors: list[str], alone: Alone, blamed: set[str], jobs: int
) -> dict[str, list[str]]:
    """The culprits of the first tampered column the tests are to blame for (the unfixed
    code's first); none when no such column is left."""
    for name in sorted(runs, key=lambda column: column != UNFIXED):
        if runs[name].status != RunStatus.TAMPERED or name in blamed or not authors:
            continue

        def by_author(author: str, column: str = name) -> TestRun:
            return alone(column, author)

        found = culprits(authors, by_author, jobs=jobs)
        if name != UNFIXED and len(found) == len(authors):
            blamed.add(name)
        elif found:
            return found
    return {}


def culprits(
    authors: Sequence[str], alone: Callable[[str], TestRun], *, jobs: int = 1
) -> dict[str, list[str]]:
    """The authors whose tests, run alone (``alone(author)``), make the run tampered, with
    its reasons; ``jobs`` runs at once."""
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        runs = dict(zip(authors, pool.map(alone, authors), strict=True))
    return {
        author: list(run.tampering) or ["its run was tampered with"]
        for author, run in runs.items()
        if run.status == RunStatus.TAMPERED
    }
