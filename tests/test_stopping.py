"""The stop of a bout, in this process: real signals to this process, real process
groups, the local executor's threads. The whole bout is stopped for real in
tests/adversarial/test_attack_interrupt.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import pytest

from bugbout.core.plumbing.runtime.executor import Executor, run_jobs
from bugbout.core.plumbing.runtime.stopping import Interrupted, Stop, watch
from bugbout.plugins.executors.local import LocalExecutor


def wait_until(condition: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_signals_request_then_kill_then_raise_and_the_handlers_come_back() -> None:
    messages: list[str] = []
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    stop = Stop(grace=600, notify=messages.append)
    with stop.installed():
        os.kill(os.getpid(), signal.SIGINT)  # no KeyboardInterrupt: a request
        wait_until(lambda: bool(messages))
        assert stop.requested and not stop.killed
        assert messages == ["stopping: 0 attempts running (Ctrl-C again to kill them now)"]
        with pytest.raises(Interrupted):
            stop.check()
        os.kill(os.getpid(), signal.SIGTERM)  # the second signal, whichever: kill now
        wait_until(lambda: stop.killed)
        with pytest.raises(Interrupted):
            os.kill(os.getpid(), signal.SIGINT)  # the third stops waiting
            time.sleep(5)
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_the_grace_ends_in_a_kill_of_every_watched_process_group() -> None:
    stop = Stop(grace=1, notify=lambda _: None)
    with stop.installed():
        marker = f"bugbout-stop-test-{os.getpid()}"
        child = f"{sys.executable} -c 'import time; time.sleep(600)' {marker}"
        leader = subprocess.Popen(["/bin/sh", "-c", f"{child} & wait"], start_new_session=True)
        watch(leader)  # found through the handler the stop installed
        stop.request()
        time.sleep(0.5)
        assert leader.poll() is None  # within the grace
        assert leader.wait(timeout=10) == -signal.SIGKILL
        wait_until(lambda: not live(marker))  # its child went with the group
        late = subprocess.Popen(["sleep", "600"], start_new_session=True)
        watch(late)  # started after the kill: killed at once
        assert late.wait(timeout=10) == -signal.SIGKILL


def live(marker: str) -> list[str]:
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True, check=False)
    return found.stdout.split()


def test_no_stop_is_installed_outside_the_main_thread() -> None:
    stop = Stop(grace=0)
    seen: list[object] = []

    def bout() -> None:
        with stop.installed():
            seen.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=bout)
    thread.start()
    thread.join()
    assert seen == [signal.getsignal(signal.SIGINT)]


def test_run_jobs_starts_nothing_once_stopped_and_drops_what_ends_after_the_kill() -> None:
    stop = Stop(grace=600, notify=lambda _: None)
    release = {name: threading.Event() for name in "abcd"}
    ran: list[str] = []

    def job(name: str) -> Callable[[], str]:
        def run() -> str:
            ran.append(name)
            release[name].wait(30)
            return name

        return run

    outcomes: list[str] = []

    def lane(executor: Executor) -> None:
        try:
            for _, future in run_jobs(executor, [job(name) for name in "abcd"], width=2):
                try:
                    outcomes.append(future.result())
                except Interrupted:
                    outcomes.append("interrupted")
        except Interrupted:
            outcomes.append("stopped")

    executor = LocalExecutor()
    try:
        with stop.installed():
            driver = threading.Thread(target=lane, args=(stop.executor(executor, "attempt"),))
            driver.start()
            wait_until(lambda: len(ran) == 2)
            stop.request()
            release["a"].set()
            wait_until(lambda: outcomes == ["a"])  # ended within the grace: kept
            stop.kill()
            wait_until(lambda: stop.killed)
            release["b"].set()
            driver.join(timeout=30)
    finally:
        executor.close()
    # b ended after the kill: not trusted; c and d never started
    assert outcomes == ["a", "interrupted", "stopped"]
    assert ran == ["a", "b"]


def test_a_job_whose_child_the_ctrl_c_reached_is_interrupted_not_failed() -> None:
    """The terminal's Ctrl-C reaches every process of its group: bugbout and the git or uv
    a job runs. That job then fails, but its failure is the signal's, not the task's."""
    stop = Stop(grace=600, notify=lambda _: None)
    children: list[subprocess.Popen[bytes]] = []

    def job() -> None:
        children.append(subprocess.Popen(["sleep", "30"]))  # in bugbout's own group
        if children[0].wait() != 0:
            raise subprocess.CalledProcessError(children[0].returncode, "sleep")

    executor = LocalExecutor()
    try:
        with stop.installed():
            future = stop.executor(executor, "task").submit(job)
            wait_until(lambda: bool(children))
            for pid in (children[0].pid, os.getpid()):  # what the terminal's Ctrl-C does
                os.kill(pid, signal.SIGINT)
            with pytest.raises(Interrupted, match="the task failed once stopped"):
                future.result(timeout=30)
            assert stop.requested and not stop.killed
    finally:
        executor.close()
