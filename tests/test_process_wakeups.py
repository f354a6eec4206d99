"""Waiting for a test process wakes bugbout a few times a second, not twenty, and an
interrupt from another thread still ends the wait promptly."""

from __future__ import annotations

import select
import subprocess
import sys

import pytest

from bugbout.core.plumbing.confinement import process as processes
from bugbout.core.plumbing.confinement.process import wait

_POLL = select.poll


class _Counted:
    """A poll object that counts how often it returns."""

    def __init__(self, returns: list[int]) -> None:
        self._poll = _POLL()
        self._returns = returns

    def register(self, fd: int, mask: int) -> None:
        self._poll.register(fd, mask)

    def poll(self, timeout: float) -> list[tuple[int, int]]:
        try:
            return self._poll.poll(timeout)
        finally:
            self._returns.append(1)


def test_waiting_a_second_wakes_a_few_times(monkeypatch: pytest.MonkeyPatch) -> None:
    returns: list[int] = []
    monkeypatch.setattr(processes.select, "poll", lambda: _Counted(returns))
    child = subprocess.Popen(["sleep", "1"])
    assert wait(child, 60) == 0
    assert len(returns) <= 6, f"woke {len(returns)} times in one second"


INTERRUPTED = """\
import _thread, signal, subprocess, threading, time
from bugbout.core.plumbing.confinement.process import wait

signal.signal(signal.SIGINT, signal.default_int_handler)  # a background job ignores it
child = subprocess.Popen(["sleep", "30"])
threading.Timer(0.1, _thread.interrupt_main).start()
started = time.monotonic()
try:
    wait(child, 60)
    print("not interrupted")
except KeyboardInterrupt:
    print(f"interrupted after {time.monotonic() - started:.2f} s")
finally:
    child.kill()
    child.wait()
"""


def test_an_interrupt_from_another_thread_ends_the_wait_soon() -> None:
    """In a process of its own: ``interrupt_main`` interrupts the main thread, and a
    test may run in another (pytest-xdist's workers); there SIGINT is Python's, even
    where the suite was started with it ignored (in the background)."""
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED], capture_output=True, text=True, timeout=60,
        check=True,
    )  # fmt: skip
    said = done.stdout.strip()
    assert said.startswith("interrupted after "), said
    assert float(said.split()[2]) < 1.0, said
