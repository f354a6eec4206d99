"""Waiting for a test process wakes bugbout a few times a second, not twenty, and an
interrupt from another thread still ends the wait promptly."""

from __future__ import annotations

import _thread
import select
import subprocess
import threading
import time

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


def test_an_interrupt_from_another_thread_ends_the_wait_soon() -> None:
    child = subprocess.Popen(["sleep", "30"])
    timer = threading.Timer(0.1, _thread.interrupt_main)
    started = time.monotonic()
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            wait(child, 60)
        assert time.monotonic() - started < 1.0
    finally:
        timer.cancel()
        child.kill()
        child.wait()
