"""The ``local`` executor: a pool of threads in this process (the default).

Jobs run where the bout runs, so they may be bound methods or closures. ``workers``
caps how many run at once across every lane; each lane's quota still applies.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from pydantic import Field

from bugbout.executors import ExecutorPlugin, Options, hookimpl

R = TypeVar("R")

DEFAULT_WORKERS = 32
"""Enough threads for the quotas of several agents at once; an attempt mostly waits on
its agent's process."""


class LocalOptions(Options):
    """Options of the ``local`` executor."""

    workers: int = Field(default=DEFAULT_WORKERS, ge=1)
    """The most jobs running at once, across every lane."""


class LocalExecutor:
    """Runs jobs on up to ``workers`` threads, started as jobs arrive."""

    name = "local"
    in_process = True

    def __init__(self, options: LocalOptions | None = None) -> None:
        self.options = options or LocalOptions()
        self._pool: ThreadPoolExecutor | None = None
        self._closed = False
        self._lock = threading.Lock()

    def problem(self) -> str | None:
        return None

    def submit(self, job: Callable[[], R]) -> Future[R]:
        with self._lock:
            if self._closed:
                raise RuntimeError("the local executor is closed")
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=self.options.workers, thread_name_prefix="bugbout-job"
                )
            return self._pool.submit(job)

    def close(self) -> None:
        """Cancels the jobs not started and waits for the running ones."""
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


@hookimpl
def bugbout_executors() -> Iterator[ExecutorPlugin]:
    yield ExecutorPlugin(
        name=LocalExecutor.name,
        factory=LocalExecutor,
        options=LocalOptions,
        description="a pool of threads in this process (option: workers)",
    )
