"""The ``__NAME__`` executor: a pool of processes on this machine.

An executor dispatches a bout's jobs (its attempts) and hands back a future for each;
bugbout itself keeps every quota lane to its limit. These jobs run in other processes,
so ``in_process`` is ``False``: bugbout then submits picklable, self-contained jobs.
Replace the pool with your scheduler's client (Dask, a batch queue, ...).
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TypeVar

from bugbout.executors import ExecutorPlugin, Options, hookimpl
from pydantic import Field

R = TypeVar("R")


class __TITLE__Options(Options):
    """Options of the ``__NAME__`` executor."""

    workers: int = Field(default=2, ge=1)
    """The most jobs running at once, one process each."""


class __TITLE__Executor:
    """Runs each job in one of ``workers`` processes, started on the first job."""

    name = "__NAME__"
    in_process = False

    def __init__(self, options: __TITLE__Options | None = None) -> None:
        self.options = options or __TITLE__Options()
        self.pool: ProcessPoolExecutor | None = None
        self.closed = False
        self.lock = threading.Lock()  # submit() is called from several threads

    def problem(self) -> str | None:
        return None

    def submit(self, job: Callable[[], R]) -> Future[R]:
        with self.lock:
            if self.closed:
                raise RuntimeError("the __NAME__ executor is closed")
            if self.pool is None:
                spawn = multiprocessing.get_context("spawn")  # fresh processes, no forked threads
                self.pool = ProcessPoolExecutor(self.options.workers, mp_context=spawn)
            return self.pool.submit(job)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            pool, self.pool = self.pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


@hookimpl
def bugbout_executors() -> Iterator[ExecutorPlugin]:
    yield ExecutorPlugin(
        name=__TITLE__Executor.name,
        factory=__TITLE__Executor,
        options=__TITLE__Options,
        description="a pool of processes on this machine",
    )
