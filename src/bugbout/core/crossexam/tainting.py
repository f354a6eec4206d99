"""Finding whose tests taint a cross-examination's runs, so that the damage stays with them.

Every author's test modules run in every column, so one test that meddles with pytest (a
``os.fork()`` whose child goes on reporting, a rewritten report) makes every column
``tampered``, the unfixed code's included, and would blind the judge to every patch. The
unfixed code has no patch: when its column is tampered, the tests are to blame. Each
author's modules then run alone on the unfixed code, and an author whose tests taint that
run is *left out*: its tests are not installed, the columns run again without them, and
the matrix says why (:attr:`~bugbout.core.store.records.Matrix.left_out`). Tampering that
no author's tests show alone (two authors' tests together, or a test that meddles only
under one patch) is not attributed: those columns stay tampered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from bugbout.core.store.records import UNFIXED, RunStatus, TestRun

LEFT_OUT = (
    "its tests were left out of the cross-examination: run alone on the unfixed code, "
    "they tampered with the test run"
)
"""What the report says first of an author whose tests were left out."""


def tainted(runs: dict[str, TestRun]) -> bool:
    """Whether the unfixed code's column is tampered: only tests can have done it."""
    run = runs.get(UNFIXED)
    return run is not None and run.status == RunStatus.TAMPERED


def culprits(
    authors: Sequence[str], alone: Callable[[str], TestRun], *, jobs: int = 1
) -> dict[str, list[str]]:
    """The authors whose tests, run alone on the unfixed code (``alone(author)``), make the
    run tampered, with its reasons; ``jobs`` runs at once."""
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        runs = dict(zip(authors, pool.map(alone, authors), strict=True))
    return {
        author: list(run.tampering) or ["its run was tampered with"]
        for author, run in runs.items()
        if run.status == RunStatus.TAMPERED
    }
