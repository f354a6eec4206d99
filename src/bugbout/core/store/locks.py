"""Lock files that name their holder.

A lock is an OS file lock (``flock``): it is released when its holder ends, even by a
crash. While it is held, the file holds one JSON line naming the holder (pid, host,
command and, for a sweep job, its sweep), so that a process refused the lock can say
who has it. A holder killed before it released the lock leaves its line behind: the
next holder takes the lock over and says so.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shlex
import socket
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

from bugbout.core.contract.errors import BugboutError

POLL = 0.5
"""Seconds between two tries of a lock held by a job of the same sweep."""
UNRECORDED = 5.0
"""Seconds a held lock may name no holder before it is refused: its holder may have
just taken it, or be releasing it (a loaded machine can pause it there)."""
_HOLDER_LIMIT = 4096


@dataclass(frozen=True)
class Holder:
    """Who holds a lock."""

    pid: int
    host: str
    command: str
    sweep: str = ""
    """The sweep directory of a sweep job: the sweep's other jobs wait for it."""

    @classmethod
    def this_process(cls, sweep: str = "") -> Holder:
        command = shlex.join(getattr(sys, "orig_argv", sys.argv))[:300]
        printable = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in command)
        return cls(os.getpid(), socket.gethostname(), printable, sweep)

    def describe(self) -> str:
        """``pid 412 (`bugbout run`)``, with the host when it is another machine."""
        where = "" if self.host == socket.gethostname() else f" on {self.host}"
        return f"pid {self.pid}{where} ({self.command})"


@contextlib.contextmanager
def exclusive(
    path: Path, holder: Holder, *, doing: str, warn: Callable[[str], None]
) -> Iterator[None]:
    """Hold the lock ``path`` as ``holder``, or stop at once with an error naming the
    process that holds it (``another bugbout is <doing>: pid ...``). A holder of the same
    sweep as ``holder`` is waited for instead."""
    with path.open("a+", encoding="utf-8") as handle:
        unrecorded = time.monotonic() + UNRECORDED
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                other = _holder(handle)
                if other is None and time.monotonic() < unrecorded:
                    time.sleep(0.01)  # a holder between its lock and its line, either way
                    continue
                if holder.sweep and other is not None and other.sweep == holder.sweep:
                    time.sleep(POLL)
                    continue
                who = other.describe() if other else "its pid is not recorded"
                raise BugboutError(
                    f"another bugbout is {doing}: {who}; "
                    "wait for it to finish (or stop it) and try again"
                ) from None
        try:
            left = _holder(handle)
            if left is not None:
                warn(f"taking over {path}: {left.describe()} ended without releasing it")
            _write(handle, json.dumps(asdict(holder)) + "\n")
            yield
        finally:
            _write(handle, "")
            fcntl.flock(handle, fcntl.LOCK_UN)


def held_by(path: Path) -> Holder | None:
    """Who holds the lock ``path`` now (``None``: nobody), without taking it: a shared
    lock tried and let go at once, which a holder's own retry gets past."""
    try:
        handle = path.open(encoding="utf-8")
    except FileNotFoundError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _holder(handle) or Holder(0, "", "its pid is not recorded")
        fcntl.flock(handle, fcntl.LOCK_UN)
    return None


def _holder(handle: IO[str]) -> Holder | None:
    """The holder the lock file names, if it names one."""
    handle.seek(0)
    try:
        return Holder(**json.loads(handle.read(_HOLDER_LIMIT)))
    except (ValueError, TypeError):
        return None


def _write(handle: IO[str], text: str) -> None:
    handle.seek(0)
    handle.truncate()
    handle.write(text)
    handle.flush()
