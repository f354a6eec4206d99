"""Stopping a bout on Ctrl-C (SIGINT) or SIGTERM without losing anything done, and
without spending more.

A :class:`Stop` is installed as the handler of both signals for the length of a bout
(:meth:`Stop.installed`, main thread only; the previous handlers come back after):

- the first signal *requests* the stop: nothing new starts (no attempt, no test run
  job, no later stage), what runs may finish within ``grace`` seconds, and a line says
  how much is running;
- a second signal, or the end of the grace, *kills*: every process group started
  meanwhile (agents, test runs, sandboxes) gets SIGKILL, and work that ends after
  the kill is not trusted: its results are never stored as done;
- a third signal stops waiting for the work to unwind (a plain ``KeyboardInterrupt``).

Every process bugbout starts for an agent or a test run is handed to :func:`watch`,
which registers it with the installed stop, if there is one. Jobs go through
:meth:`Stop.executor`, which starts nothing once the stop is requested and fails the
jobs that end after the kill with :class:`Interrupted`; a job sent to another process
(a Ray worker) runs there under a stop without grace, which the kill reaches by
cancelling the job. The bout then ends with :class:`Interrupted`, a
``KeyboardInterrupt``: the command line exits with status 130.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import weakref
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError, Future
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from bugbout.core.plumbing.runtime.executor import Executor

R = TypeVar("R")

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """The bout was stopped by a signal: nothing more starts, nothing unfinished is kept."""


class Stop:
    """A bout's stop: requested by the first signal, killing after ``grace`` seconds or
    on the second signal. ``notify`` receives the one-line messages."""

    def __init__(self, grace: float = 30.0, notify: Callable[[str], None] | None = None) -> None:
        self.grace = grace
        self.notify = notify or _to_stderr
        self._state = threading.Condition(threading.RLock())  # a handler may interrupt a holder
        self._requested = False
        self._kill_now = False
        self._killed = False
        self._closed = False
        self._processes: weakref.WeakSet[subprocess.Popen[bytes]] = weakref.WeakSet()
        self._remote: set[Future[Any]] = set()
        """Jobs running elsewhere (a Ray worker), cancelled by the kill."""
        self._running: Counter[str] = Counter()

    @property
    def requested(self) -> bool:
        """Whether the stop was requested: start nothing new."""
        return self._requested

    @property
    def killed(self) -> bool:
        """Whether the running work was killed: what ends now is not trusted."""
        return self._killed

    def check(self) -> None:
        """Raise :class:`Interrupted` once the stop is requested: call it before
        starting anything."""
        if self._requested:
            raise Interrupted("stopped by a signal")

    def request(self) -> None:
        """Start nothing new; kill what still runs after the grace."""
        with self._state:
            self._requested = True
            self._state.notify_all()

    def kill(self) -> None:
        """Kill what runs now, without waiting for the grace."""
        with self._state:
            self._requested = self._kill_now = True
            self._state.notify_all()

    def watch(self, process: subprocess.Popen[bytes]) -> None:
        """Kill ``process``'s group (it leads one) when the stop kills; at once if it has."""
        with self._state:
            if not self._killed:
                self._processes.add(process)
                return
        _kill_group(process)

    def watch_remote(self, future: Future[Any]) -> None:
        """Cancel ``future`` (a job running in another process) when the stop kills; at
        once if it has. A cancelled Ray task gets a KeyboardInterrupt: see
        :class:`~bugbout.core.race.race.RemoteAttempt`."""
        with self._state:
            if not self._killed:
                self._remote.add(future)
                future.add_done_callback(self._forget)
                return
        future.cancel()

    def _forget(self, future: Future[Any]) -> None:
        with self._state:
            self._remote.discard(future)

    def count(self, noun: str, change: int) -> None:
        """One more (``change`` 1) or one less (-1) ``noun`` running, for the message."""
        with self._state:
            self._running[noun] += change

    def executor(self, executor: Executor, noun: str) -> StoppingExecutor:
        """``executor``, seen through this stop: see :class:`StoppingExecutor`."""
        return StoppingExecutor(executor, self, noun)

    @contextlib.contextmanager
    def installed(self) -> Iterator[Stop]:
        """This stop as the handler of SIGINT and SIGTERM, and its watcher thread; the
        previous handlers after. Outside the main thread signals cannot be handled:
        nothing is installed, and the stop is never requested by a signal."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = {number: signal.getsignal(number) for number in SIGNALS}
        watcher = threading.Thread(target=self._serve, name="bugbout-stop", daemon=True)
        watcher.start()  # before the handlers: a handler must never start a thread
        try:
            for number in SIGNALS:
                signal.signal(number, self._signalled)
            yield self
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)
            with self._state:
                self._closed = True
                self._state.notify_all()
            watcher.join()

    def _signalled(self, number: int, _frame: FrameType | None) -> None:
        """The signal handler: request, then kill, then stop waiting."""
        if not self._requested:
            self.request()
        elif not self._kill_now:
            self.kill()
        else:
            raise Interrupted(f"{signal.Signals(number).name} a third time")

    def _serve(self) -> None:
        """The watcher: say what runs once the stop is requested, then kill at the end of
        the grace or on request; nothing once the bout is over."""
        with self._state:
            self._state.wait_for(lambda: self._requested or self._closed)
            if self._closed:
                return
            what = ", ".join(_count(n, noun) for noun, n in sorted(self._running.items()) if n)
        self.notify(
            f"stopping: {what or _count(0, 'attempt')} running (Ctrl-C again to kill them now)"
        )
        with self._state:
            self._state.wait_for(lambda: self._kill_now or self._closed, timeout=self.grace)
            if self._closed:
                return
            self._killed = True
            processes = list(self._processes)
            remote = list(self._remote)
            left = sum(self._running.values())
        if left:
            self.notify(f"stopping: killing {_count(left, 'job')} still running")
        for process in processes:
            _kill_group(process)
        for future in remote:
            future.cancel()


class StoppingExecutor:
    """An executor seen through a :class:`Stop`: ``submit`` raises :class:`Interrupted`
    once the stop is requested, each job counts as a running ``noun`` until it ends, and
    a job that ends after the kill fails with :class:`Interrupted` whatever it returned
    (its processes may have been killed under it), as does a job that fails once the stop
    is requested (the signal may have reached its processes). ``close`` closes the
    executor."""

    def __init__(self, executor: Executor, stop: Stop, noun: str) -> None:
        self.inner = executor
        self.stop = stop
        self.noun = noun
        self.name = executor.name
        self.in_process = executor.in_process

    def problem(self) -> str | None:
        return self.inner.problem()

    def submit(self, job: Callable[[], R]) -> Future[R]:
        self.stop.check()
        inner = self.inner.submit(job if self.in_process else _StoppedByCancel(job))
        self.stop.count(self.noun, 1)
        if not self.in_process:
            self.stop.watch_remote(inner)
        outer: Future[R] = Future()

        def relay(done: Future[R]) -> None:
            self.stop.count(self.noun, -1)
            if not outer.set_running_or_notify_cancel():
                return
            if self.stop.killed:  # a cancelled remote job too: the stop cancelled it
                outer.set_exception(Interrupted(f"the {self.noun} was killed by the stop"))
            elif self.stop.requested and not done.cancelled() and done.exception() is not None:
                # the terminal's Ctrl-C reaches the job's own children (git, uv) too
                outer.set_exception(Interrupted(f"the {self.noun} failed once stopped"))
            elif done.cancelled():
                outer.set_exception(CancelledError())
            elif (error := done.exception()) is not None:
                outer.set_exception(error)
            else:
                outer.set_result(done.result())

        inner.add_done_callback(relay)
        return outer

    def close(self) -> None:
        self.inner.close()


@dataclass(frozen=True)
class _StoppedByCancel(Generic[R]):
    """A job sent to another process (a Ray worker), run there under a stop of its own
    without grace: cancelling the job (Ray interrupts the worker's main thread, as a
    SIGINT would) kills the processes it started at once."""

    job: Callable[[], R]

    def __call__(self) -> R:
        with Stop(grace=0, notify=lambda _: None).installed():
            return self.job()


def current_stop() -> Stop | None:
    """The stop installed in this process (the one its signals reach), if any."""
    stop = getattr(signal.getsignal(signal.SIGINT), "__self__", None)
    return stop if isinstance(stop, Stop) else None


def stopping() -> bool:
    """Whether the stop installed in this process, if any, was requested."""
    stop = current_stop()
    return stop is not None and stop.requested


def watch(process: subprocess.Popen[Any]) -> None:
    """Hand ``process`` (the leader of its own process group) to the stop installed in
    this process, if any, so that stopping the bout kills its whole group."""
    stop = current_stop()
    if stop is not None:
        stop.watch(process)


def _kill_group(process: subprocess.Popen[Any]) -> None:
    """SIGKILL ``process``'s group unless it was reaped (its owner reaps it)."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)


def _to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"
