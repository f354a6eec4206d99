"""The guard: runs an agent's command and kills it when it goes past a limit.

Run as a script, outside the sandbox, with only the standard library (it starts in a
tenth of a second)::

    python3 -I -S guard.py SPEC ARGV...

``SPEC`` is JSON: ``report`` (a file to write the breach to), ``watched`` (folders),
``memory``, ``processes``, ``disk`` and ``files``. The guard becomes a child subreaper,
so every process the command starts stays its descendant, even orphaned. Every
``INTERVAL`` seconds it adds up the private resident memory (``statm``: resident minus
shared) and the number of its descendants; every few seconds it measures how many bytes
and entries the watched folders gained since the start. Past a limit it writes
``{"limit", "used", "allowed"}`` to the report, kills every descendant and exits 137.
Files are capped at ``disk`` bytes by ``RLIMIT_FSIZE``. Otherwise it exits with the
command's status (128 + the signal when killed), after killing whatever it left behind.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import select
import signal
import sys
import time

TYPE_CHECKING = False  # typing is not imported: the guard starts on every attempt
if TYPE_CHECKING:
    from typing import Any

Breach = dict[str, int | str]
"""What the report holds: ``limit``, ``used``, ``allowed``."""

INTERVAL = 0.2
"""Seconds between two looks at the processes."""
DISK_EVERY = 1.0
"""The least seconds between two measures of the watched folders (more when one is slow)."""
SUBREAPER = 36
"""``PR_SET_CHILD_SUBREAPER``."""
PAGE = os.sysconf("SC_PAGE_SIZE")
KILLED = 137


def main(args: list[str]) -> int:
    spec, argv = json.loads(args[0]), args[1:]
    watched = [path for path in spec["watched"] if os.path.isdir(path)]
    baseline = _measure(watched, None)
    try:  # noqa: SIM105 (no contextlib: its imports are a tenth of the guard's start)
        ctypes.CDLL(None, use_errno=True).prctl(SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    largest = spec["disk"] + 1 if hard == resource.RLIM_INFINITY else min(hard, spec["disk"] + 1)
    resource.setrlimit(resource.RLIMIT_FSIZE, (largest, largest))
    try:
        # Python ignores SIGPIPE and SIGXFSZ; the command gets their default actions back.
        child = os.posix_spawnp(
            argv[0], argv, dict(os.environ), setsigdef=(signal.SIGPIPE, signal.SIGXFSZ)
        )
    except OSError as exc:
        print(f"bugbout: cannot run {argv[0]}: {exc.strerror}", file=sys.stderr)
        return 127
    status: int | None = None
    next_disk = time.monotonic() + DISK_EVERY
    breach = None
    ended = _ending(child)
    while status is None:
        status = _reap(child, INTERVAL, ended)
        processes, memory = _tree()
        breach = _over("processes", processes, spec) or _over("memory", memory, spec)
        if breach is None and (status is not None or time.monotonic() >= next_disk):
            started = time.monotonic()
            breach = _disk(watched, baseline, spec)
            next_disk = time.monotonic() + max(DISK_EVERY, 10 * (time.monotonic() - started))
        if breach is not None:
            _write(spec["report"], breach)
            break
    _kill_all()
    if breach is not None:
        return KILLED
    assert status is not None
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def _ending(child: int) -> int | None:
    """A descriptor that becomes readable when ``child`` ends (a pidfd, Linux 5.3 and
    later), or ``None``."""
    try:
        return os.pidfd_open(child)
    except (AttributeError, OSError):
        return None


def _reap(child: int, timeout: float, ended: int | None = None) -> int | None:
    """Reap every ended descendant for up to ``timeout`` seconds; the child's wait status
    once it has ended (at once when ``ended``, its pidfd, says so; else within 20 ms)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            pid, status = 0, 0
        if pid == child:
            return status
        if pid == 0:
            if time.monotonic() >= deadline:
                return None
            pause = min(0.02, max(0.0, deadline - time.monotonic()))
            if ended is None:
                time.sleep(pause)
            else:
                select.select([ended], [], [], pause)


def _tree() -> tuple[int, int]:
    """How many descendants the guard has, and their private resident memory in bytes."""
    descendants = _descendants()
    memory = 0
    for pid in descendants:
        try:
            with open(f"/proc/{pid}/statm", "rb") as handle:
                fields = handle.read().split()
            memory += max(0, int(fields[1]) - int(fields[2])) * PAGE
        except (OSError, IndexError, ValueError):
            continue
    return len(descendants), memory


def _descendants() -> list[int]:
    """The pids of every process below the guard (from each process's parent in /proc)."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:  # no /proc (macOS): no process is counted
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2 :].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(name))
    found, pending = [], [os.getpid()]
    while pending:
        for pid in children.get(pending.pop(), ()):
            found.append(pid)
            pending.append(pid)
    return found


def _measure(folders: list[str], most: int | None) -> tuple[int, int]:
    """Bytes allocated and entries under ``folders``, links not followed; the count stops
    a little past ``most`` entries."""
    allocated = entries = 0
    pending = list(folders)
    while pending:
        try:
            scanner = os.scandir(pending.pop())
        except OSError:
            continue
        with scanner:
            for entry in scanner:
                entries += 1
                if most is not None and entries > most:
                    return allocated, entries
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                allocated += info.st_blocks * 512
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
    return allocated, entries


def _disk(folders: list[str], baseline: tuple[int, int], spec: dict[str, Any]) -> Breach | None:
    allocated, entries = _measure(folders, baseline[1] + spec["files"])
    return _over("files", entries - baseline[1], spec) or _over(
        "disk", allocated - baseline[0], spec
    )


def _over(limit: str, used: int, spec: dict[str, Any]) -> Breach | None:
    return {"limit": limit, "used": used, "allowed": spec[limit]} if used > spec[limit] else None


def _write(report: str, breach: Breach) -> None:
    temporary = f"{report}.{os.getpid()}"
    with open(temporary, "w") as handle:
        json.dump(breach, handle)
    os.replace(temporary, report)


def _kill_all() -> None:
    """Kill every descendant, again until none is left (a fork bomb forks meanwhile), and
    reap them."""
    for _ in range(1000):
        pids = _descendants()
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                continue
        _reap(-1, 0.01)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
