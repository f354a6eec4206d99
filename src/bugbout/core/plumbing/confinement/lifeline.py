"""bugbout's lifeline: a pipe whose write end only this process holds, so that what it
starts can tell when it has ended, however it ended (``kill -9`` included).

The guard in front of every agent and test run is handed the read end
(``--lifeline=FD``); when the pipe reads end of file, the kernel has closed the write end
because this process is gone, and the guard kills everything it guards. Unlike
``PR_SET_PDEATHSIG``, which fires when the *thread* that started a process exits, this
holds whichever thread of a pool started the run. The write end is never inherited: it
is close-on-exec, and a forked child drops its copy and makes a pipe of its own.
"""

from __future__ import annotations

import os
import threading


class _Pipe:
    """This process's lifeline: the pid that made it, its read end and its write end."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ends: tuple[int, int, int] | None = None

    def read_end(self) -> int:
        with self.lock:
            if self.ends is None or self.ends[0] != os.getpid():
                read, write = os.pipe()
                self.ends = (os.getpid(), read, write)
            return self.ends[1]

    def drop(self) -> None:
        """In a forked child: close the parent's ends (the child must not keep the
        parent alive in the eyes of its guards); the child makes its own on first use."""
        self.lock = threading.Lock()  # another thread may have held it at the fork
        for fd in self.ends[1:] if self.ends is not None else ():
            try:
                os.close(fd)
            except OSError:
                continue
        self.ends = None


_PIPE = _Pipe()
os.register_at_fork(after_in_child=_PIPE.drop)


def lifeline() -> int:
    """The read end of this process's lifeline (made on first use), non-inheritable: pass
    it to a child explicitly (``pass_fds``)."""
    return _PIPE.read_end()
