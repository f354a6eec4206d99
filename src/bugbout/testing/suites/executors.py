"""The conformance suite of executors.

Its jobs are module-level functions (and ``functools.partial`` of them), so they pickle
by reference: an executor that runs jobs in other processes imports this module there.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from functools import partial
from typing import Any, ClassVar

import pytest

from bugbout.testing.suites.base import PluginSuite

TIMEOUT = 120.0
"""Seconds a job may take to come back, worker start-up included."""


class JobFailed(Exception):
    """What :func:`fail` raises."""


def add(a: int, b: int) -> int:
    """A job's work: ``a + b``."""
    return a + b


def fail(message: str) -> None:
    """A job that fails with ``JobFailed(message)``."""
    raise JobFailed(message)


def where() -> tuple[int, int]:
    """The process and thread a job ran in."""
    return os.getpid(), threading.get_ident()


class ExecutorSuite(PluginSuite):
    """Contract tests for an executor (``bugbout_executors``).

    ``problem()`` is ``None`` when the executor can run here, else one line saying why
    not (the behavioural tests are then skipped). ``submit(job)`` returns a future that
    holds what the job returned, or the very exception it raised; the executor keeps
    working after a job fails, takes jobs from several threads at once, and ``close()``
    may be called twice. Every job the suite submits is picklable; an executor with
    ``in_process`` true must also run closures.
    """

    kind: ClassVar[str] = "executor"

    @pytest.fixture
    def executor(self, plugin_under_test: Any) -> Iterator[Any]:
        """The executor, closed after the test; the test is skipped where it cannot run."""
        problem = plugin_under_test.problem()
        if problem is not None:
            pytest.skip(f"{self.plugin} does not work here: {problem}")
        try:
            yield plugin_under_test
        finally:
            plugin_under_test.close()

    # -- what it says about itself -----------------------------------------------------------

    def test_names_itself(self, plugin_under_test: Any) -> None:
        assert plugin_under_test.name == self.plugin

    def test_says_whether_jobs_run_in_process(self, plugin_under_test: Any) -> None:
        assert isinstance(plugin_under_test.in_process, bool)

    def test_problem_is_none_or_one_line(self, plugin_under_test: Any) -> None:
        problem = plugin_under_test.problem()
        if problem is not None:
            assert isinstance(problem, str)
            assert problem.strip(), "an empty problem says nothing"
            assert "\n" not in problem.strip()
        assert plugin_under_test.problem() == problem, "problem() changed between calls"

    # -- running jobs --------------------------------------------------------------------------

    def test_a_future_holds_the_result(self, executor: Any) -> None:
        future = executor.submit(partial(add, 2, 3))
        assert isinstance(future, Future)
        assert future.result(timeout=TIMEOUT) == 5

    def test_every_job_gets_its_own_result(self, executor: Any) -> None:
        futures = [executor.submit(partial(add, n, n)) for n in range(8)]
        assert [future.result(timeout=TIMEOUT) for future in futures] == [2 * n for n in range(8)]

    def test_a_future_holds_the_exception_the_job_raised(self, executor: Any) -> None:
        future = executor.submit(partial(fail, "job 7 failed"))
        with pytest.raises(JobFailed) as raised:
            future.result(timeout=TIMEOUT)
        assert type(raised.value) is JobFailed, "the job's exception, not a wrapper"
        assert str(raised.value) == "job 7 failed"

    def test_keeps_working_after_a_job_fails(self, executor: Any) -> None:
        failed = executor.submit(partial(fail, "first"))
        assert isinstance(failed.exception(timeout=TIMEOUT), JobFailed)
        assert executor.submit(partial(add, 1, 1)).result(timeout=TIMEOUT) == 2

    def test_takes_jobs_from_several_threads(self, executor: Any) -> None:
        futures: dict[int, Future[int]] = {}
        lock = threading.Lock()

        def submit(n: int) -> None:
            future = executor.submit(partial(add, n, 100))
            with lock:
                futures[n] = future

        threads = [threading.Thread(target=submit, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(TIMEOUT)
        assert {n: future.result(timeout=TIMEOUT) for n, future in futures.items()} == {
            n: n + 100 for n in range(4)
        }

    def test_an_in_process_executor_runs_closures(self, executor: Any) -> None:
        if not executor.in_process:
            pytest.skip(f"{self.plugin} runs jobs in other processes (in_process = False)")
        seen: list[int] = []

        def job() -> int:
            seen.append(os.getpid())
            return len(seen)

        assert executor.submit(job).result(timeout=TIMEOUT) == 1
        assert seen == [os.getpid()]

    # -- closing -------------------------------------------------------------------------------

    def test_close_is_idempotent(self, executor: Any) -> None:
        assert executor.submit(where).result(timeout=TIMEOUT)
        executor.close()
        executor.close()

    def test_closing_an_unused_executor_does_nothing(self, plugin_under_test: Any) -> None:
        plugin_under_test.close()
        plugin_under_test.close()
