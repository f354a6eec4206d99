"""Executors: how a bout dispatches its units of work (its attempts, and each task's
test runs: ground truth, then cross-examination, scores and audits).

An executor runs the jobs it is given and nothing more. The limits stay in the driver:
per lane the race keeps at most ``run.quotas[lane]`` attempts submitted at a time, so a
quota holds however many workers the executor has, on one machine or many; and at most
``tasks.jobs`` tasks' test runs are submitted at a time.

A job is a callable that takes no arguments. Where the executor runs jobs in this
process (``in_process``), a job may be a bound method or a closure over the bout's
state; elsewhere it must be picklable and self-contained: it ships the spec of what it
needs and rebuilds in the worker the plugins it uses
(:class:`bugbout.core.pipeline.WorkerBenches`, :class:`bugbout.core.pipeline.WorkerRace`,
:class:`bugbout.core.tasks.OracleJob`).
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, wait
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from bugbout.core.contract.errors import PluginError
from bugbout.core.contract.types import ExecutorPlugin
from bugbout.core.plumbing.runtime.stopping import Interrupted

if TYPE_CHECKING:
    from bugbout.core.contract.manager import Plugins
    from bugbout.core.contract.settings import BoutSettings

R = TypeVar("R")
JobT = TypeVar("JobT", bound=Callable[[], Any])


@runtime_checkable
class Executor(Protocol):
    """Runs jobs and hands back a future for each.

    - ``name``: the plugin's name.
    - ``in_process``: ``True`` when jobs run in this process (threads), so they may be
      bound methods or closures; ``False`` when they run in other processes or on other
      machines, so they must be picklable, self-contained callables.
    - ``problem()``: ``None`` when the executor can run here, else one line saying why
      not and how to fix it.
    - ``submit(job)``: schedules ``job()``; its future holds what the job returned, or
      the exception it raised. May be called from several threads.
    - ``close()``: no more jobs; jobs not yet started are cancelled. Call it once the
      futures you need are done. Closing twice does nothing.
    """

    name: str
    in_process: bool

    def problem(self) -> str | None: ...

    def submit(self, job: Callable[[], R]) -> concurrent.futures.Future[R]: ...

    def close(self) -> None: ...


def make_executor(settings: BoutSettings, plugins: Plugins) -> Executor:
    """The executor ``settings`` select, ready to take jobs; a one-line error when it
    cannot run here."""
    executor: Executor = plugins.create(
        ExecutorPlugin, settings.executor.name, settings.executor.options
    )
    problem = executor.problem()
    if problem:
        raise PluginError(f"executor {settings.executor.name!r}: {problem}")
    return executor


def run_jobs(
    executor: Executor, jobs: Iterable[JobT], width: int
) -> Iterator[tuple[JobT, concurrent.futures.Future[Any]]]:
    """Submit ``jobs`` in order, at most ``width`` unfinished at once, and yield each with
    its future as it finishes: how a quota lane or ``tasks.jobs`` holds on any executor.

    When the bout is stopped (``submit`` raises
    :class:`~bugbout.core.plumbing.runtime.stopping.Interrupted`, see
    :meth:`~bugbout.core.plumbing.runtime.stopping.Stop.executor`), nothing more is submitted: the
    jobs running are yielded as they end, then :class:`Interrupted` is raised for the rest."""
    queue = list(jobs)
    running: dict[concurrent.futures.Future[Any], JobT] = {}
    stopped: Interrupted | None = None
    while (queue and stopped is None) or running:
        while queue and stopped is None and len(running) < max(1, width):
            try:
                running[executor.submit(queue[0])] = queue[0]
            except Interrupted as exc:
                stopped = exc
            else:
                queue.pop(0)
        if running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                yield running.pop(future), future
    if stopped is not None:
        raise stopped
