"""The ``ray`` executor: jobs run as Ray tasks, in a local Ray instance or on a cluster.

Jobs run in Ray's worker processes, so they must be picklable and self-contained. Ray
is imported and started (or joined) on the first job, and ``close()`` stops it only if
this executor started it. A task is never retried by Ray: a job that dies with its
worker fails, and bugbout decides whether to run it again.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any, TypeVar

from pydantic import Field, model_validator

from bugbout.executors import ExecutorPlugin, Options, PluginError, hookimpl

R = TypeVar("R")

MISSING = "ray is not installed: pip install 'bugbout[ray]'"


class RayOptions(Options):
    """Options of the ``ray`` executor."""

    address: str | None = None
    """``null`` starts a Ray instance on this machine; ``auto`` or ``ray://HOST:10001``
    joins a running cluster."""
    num_cpus: int | None = Field(default=None, ge=1)
    """The CPUs of the Ray instance started here (every CPU when unset); one per job."""
    runtime_env: dict[str, Any] | None = None
    """Ray's runtime environment for the workers (``pip``, ``env_vars``, ...), as is."""

    @model_validator(mode="after")
    def _num_cpus_is_local(self) -> RayOptions:
        if self.address is not None and self.num_cpus is not None:
            raise ValueError("num-cpus sizes a Ray instance started here; unset it with address")
        return self


def run_job(job: Callable[[], R]) -> R:
    """What each Ray task runs: the job."""
    return job()


class RayExecutor:
    """Submits each job as a Ray task; its future holds the job's result or exception."""

    name = "ray"
    in_process = False

    def __init__(self, options: RayOptions | None = None) -> None:
        self.options = options or RayOptions()
        self._remote: Any = None
        self._started = False
        self._closed = False
        self._pending: set[Future[Any]] = set()
        self._lock = threading.Lock()

    def problem(self) -> str | None:
        return None if _installed() else MISSING

    def submit(self, job: Callable[[], R]) -> Future[R]:
        remote = self._connect()
        ref = remote.remote(job)
        outer: Future[R] = Future()
        inner = ref.future()
        inner.add_done_callback(lambda done: _relay(done, outer))
        outer.add_done_callback(lambda done: _cancel(done, ref))
        with self._lock:
            self._pending.add(outer)
        outer.add_done_callback(self._forget)
        return outer

    def close(self) -> None:
        """Cancels every unfinished job, then stops Ray if this executor started it."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            pending, self._pending = list(self._pending), set()
        for future in pending:
            future.cancel()
        if self._started:
            import ray

            ray.shutdown()
            self._started = False

    def _connect(self) -> Any:
        """The remote function, Ray started or joined on the first call."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the ray executor is closed")
            if self._remote is None:
                try:
                    import ray
                except ImportError:
                    raise PluginError(MISSING) from None
                if not ray.is_initialized():
                    self._init(ray)
                self._remote = ray.remote(max_retries=0)(run_job)
            return self._remote

    def _init(self, ray: Any) -> None:
        options = self.options
        settings: dict[str, Any] = {
            "address": options.address,
            "include_dashboard": False,
            "logging_level": logging.ERROR,
            "log_to_driver": False,
        }
        if options.num_cpus is not None:
            settings["num_cpus"] = options.num_cpus
        if options.runtime_env is not None:
            settings["runtime_env"] = options.runtime_env
        try:
            ray.init(**settings)
        except Exception as exc:
            where = options.address or "a local instance"
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise PluginError(f"cannot start Ray ({where}): {reason}") from None
        self._started = True

    def _forget(self, future: Future[Any]) -> None:
        with self._lock:
            self._pending.discard(future)


def _installed() -> bool:
    """Whether ``import ray`` can work, without importing it."""
    try:
        return importlib.util.find_spec("ray") is not None
    except ValueError:  # imported already, without a spec
        return True


def _relay(done: Future[Any], outer: Future[Any]) -> None:
    """Hands a Ray task's outcome to ``outer``: the job's own exception, not Ray's wrapper."""
    if not outer.set_running_or_notify_cancel():
        return
    if done.cancelled():
        outer.set_exception(PluginError("the Ray task was cancelled"))
        return
    error = done.exception()
    if error is None:
        outer.set_result(done.result())
        return
    cause = getattr(error, "cause", None)
    from ray.exceptions import RayTaskError

    outer.set_exception(
        cause if isinstance(error, RayTaskError) and isinstance(cause, BaseException) else error
    )


def _cancel(outer: Future[Any], ref: Any) -> None:
    """A future cancelled before its task ends cancels the task."""
    if outer.cancelled():
        import ray

        if ray.is_initialized():
            ray.cancel(ref)


@hookimpl
def bugbout_executors() -> Iterator[ExecutorPlugin]:
    yield ExecutorPlugin(
        name=RayExecutor.name,
        factory=RayExecutor,
        options=RayOptions,
        description="Ray tasks, on a local Ray instance or a cluster (options: address, ...)",
    )
