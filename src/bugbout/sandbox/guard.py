"""The guard: runs an agent's command and kills it when it goes past a limit.

Run as a script, outside the sandbox, by an isolated interpreter without site-packages,
and importing as little of the standard library as it can (it starts on every attempt;
``json``, ``signal`` and ``typing`` alone would double its start)::

    python3 -I -S guard.py --report=FILE --memory=N --processes=N --disk=N --files=N
        [--watch=FOLDER]... [--lifeline=FD] -- ARGV...

``--report`` is a file to write the breach to, ``--watch`` a folder whose growth (bytes
and entries) is limited, ``--lifeline`` an inherited descriptor: the read end of a pipe
whose write end only bugbout holds. When it reads end of file, bugbout has ended,
however it ended: the guard kills every descendant and exits 137. The guard becomes a
child subreaper, so every process the command starts stays its descendant, even
orphaned. Every ``INTERVAL`` seconds it adds up the private resident memory (``statm``:
resident minus shared) and the number of its descendants; every few seconds it measures
how many bytes and entries the watched folders gained since the start. Past a limit it
writes ``{"limit", "used", "allowed"}`` to the report, kills every descendant and exits
137. Files are capped at ``disk`` bytes by ``RLIMIT_FSIZE``. Otherwise it exits with the
command's status (128 + the signal when killed), after killing whatever it left behind.
Bad options: exit status 2.

``guard.c`` is the same guard in C, which bugbout compiles and runs instead
(``bugbout.sandbox.guard_build``); this one runs where it cannot be compiled. A change
to one is made to the other: ``tests/test_guard.py`` runs every test under both.
"""

import _signal  # the signal numbers; ``signal`` itself builds enums on import
import ctypes
import os
import resource
import select
import sys
import time

Breach = dict[str, int | str]
"""What the report holds: ``limit``, ``used``, ``allowed``."""

LIMITS = ("memory", "processes", "disk", "files")
INTERVAL = 0.2
"""Seconds between two looks at the processes."""
DISK_EVERY = 1.0
"""The least seconds between two measures of the watched folders (more when one is slow)."""
SUBREAPER = 36
"""``PR_SET_CHILD_SUBREAPER``."""
PAGE = os.sysconf("SC_PAGE_SIZE")
KILLED = 137
WATCHED = 64
"""The most killed processes waited for through a pidfd each (one descriptor each)."""
USAGE = 2
PID_LIMIT = 4_194_304
"""The most processes Linux has at once (``PID_MAX_LIMIT``)."""


class Spec:
    """The command line: where to report, the folders watched, the limits, the command."""

    def __init__(self, args: list[str]) -> None:
        """Read ``args``; a ``ValueError`` says what is wrong."""
        self.report = ""
        self.watched: list[str] = []
        self.limits: dict[str, int] = {}
        self.lifeline: int | None = None
        position = 0
        while position < len(args) and args[position] != "--":
            option, equals, value = args[position].removeprefix("--").partition("=")
            if not equals or option not in (*LIMITS, "report", "watch", "lifeline"):
                raise ValueError(f"unknown option or no value: {args[position]!r}")
            if option == "report":
                self.report = value
            elif option == "lifeline":
                self.lifeline = _descriptor(value, args[position])
            elif option == "watch":
                self.watched.append(value)
            else:
                self.limits[option] = int(value)
            position += 1
        self.argv = args[position + 1 :]
        missing = [name for name in LIMITS if name not in self.limits]
        if missing or not self.report or not self.argv:
            raise ValueError(f"missing {', '.join(missing) or '--report or the command'}")


def main(args: list[str]) -> int:
    try:
        spec = Spec(args)
    except ValueError as exc:
        print(f"bugbout guard: {exc}", file=sys.stderr)
        return USAGE
    argv, limits = spec.argv, spec.limits
    watched = [path for path in spec.watched if os.path.isdir(path)]
    baseline = _measure(watched, None)
    try:  # noqa: SIM105 (no contextlib: the guard imports what it must, nothing more)
        ctypes.CDLL(None, use_errno=True).prctl(SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    largest = limits["disk"] + 1
    largest = largest if hard == resource.RLIM_INFINITY else min(hard, largest)
    resource.setrlimit(resource.RLIMIT_FSIZE, (largest, largest))
    try:
        # Python ignores SIGPIPE and SIGXFSZ; the command gets their default actions back.
        child = os.posix_spawnp(
            argv[0], argv, dict(os.environ), setsigdef=(_signal.SIGPIPE, _signal.SIGXFSZ)
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
        descendants = _descendants()
        if _orphaned(spec.lifeline):  # bugbout is gone: nothing of the run outlives it
            _kill_all(descendants)
            return KILLED
        memory = _memory(descendants)
        breach = _over("processes", len(descendants), limits) or _over("memory", memory, limits)
        if breach is None and (status is not None or time.monotonic() >= next_disk):
            started = time.monotonic()
            breach = _disk(watched, baseline, limits)
            next_disk = time.monotonic() + max(DISK_EVERY, 10 * (time.monotonic() - started))
        if breach is not None:
            _write(spec.report, breach)
            break
    _kill_all(descendants)
    if breach is not None:
        return KILLED
    assert status is not None
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def _descriptor(value: str, option: str) -> int:
    """The open descriptor ``value`` names, made close-on-exec: the command never holds it."""
    try:
        os.set_inheritable(int(value), False)
    except (ValueError, OSError):
        raise ValueError(f"not an open descriptor: {option!r}") from None
    return int(value)


def _orphaned(lifeline: int | None) -> bool:
    """Whether bugbout has ended: the write end of its ``lifeline``, which only bugbout held,
    is closed, however bugbout ended (the pipe reads end of file)."""
    if lifeline is None:
        return False
    poller = select.poll()
    poller.register(lifeline, select.POLLIN)
    return bool(poller.poll(0))


def _ending(child: int) -> int | None:
    """A descriptor that becomes readable when ``child`` ends (a pidfd, Linux 5.3 and
    later), or ``None``."""
    try:
        return os.pidfd_open(child)
    except (AttributeError, OSError):
        return None


def _reap(child: int, timeout: float, ended: int | None = None) -> int | None:
    """Reap every ended descendant for up to ``timeout`` seconds; the child's wait status
    once it has ended (at once when ``ended``, its pidfd, says so; else within 20 ms).
    With ``child`` -1, it returns as soon as no child is left."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:  # none left (the sandbox's first process, orphaned)
            if child == -1:
                return None
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


def _memory(descendants: list[int]) -> int:
    """The private resident memory of ``descendants``, in bytes."""
    memory = 0
    for pid in descendants:
        try:
            with open(f"/proc/{pid}/statm", "rb") as handle:
                fields = handle.read().split()
            memory += max(0, int(fields[1]) - int(fields[2])) * PAGE
        except (OSError, IndexError, ValueError):
            continue
    return memory


def _descendants() -> list[int]:
    """The pids of every process below the guard, from the children the kernel lists for
    each process: only the guard's own tree is read, not every process of the machine
    (a kernel without those lists, ``CONFIG_PROC_CHILDREN``: :func:`_scanned`)."""
    own = os.getpid()
    if not os.path.exists(f"/proc/{own}/task/{own}/children"):
        return _scanned()
    found: list[int] = []
    pending = [own]
    while pending and len(found) <= PID_LIMIT:  # pids reused while read may make a loop
        pid = pending.pop()
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:  # ended meanwhile
            continue
        for thread in threads:
            try:
                with open(f"/proc/{pid}/task/{thread}/children", "rb") as handle:
                    listed = [int(child) for child in handle.read().split()]
            except OSError:
                continue
            found += listed
            pending += listed
    return found


def _scanned() -> list[int]:
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


def _disk(folders: list[str], baseline: tuple[int, int], limits: dict[str, int]) -> Breach | None:
    allocated, entries = _measure(folders, baseline[1] + limits["files"])
    return _over("files", entries - baseline[1], limits) or _over(
        "disk", allocated - baseline[0], limits
    )


def _over(limit: str, used: int, limits: dict[str, int]) -> Breach | None:
    allowed = limits[limit]
    return {"limit": limit, "used": used, "allowed": allowed} if used > allowed else None


def _write(report: str, breach: Breach) -> None:
    temporary = f"{report}.{os.getpid()}"
    with open(temporary, "w") as handle:  # JSON; no json module: it imports re
        handle.write(
            f'{{"limit": "{breach["limit"]}", "used": {breach["used"]}, '
            f'"allowed": {breach["allowed"]}}}'
        )
    os.replace(temporary, report)


def _kill_all(pids: list[int]) -> None:
    """Kill ``pids`` (the descendants, just listed) and every descendant, again until none
    is left (a fork bomb forks meanwhile), and reap them."""
    for _ in range(1000):
        if not pids:  # none alive, so none can start another
            return
        for pid in pids:
            try:
                os.kill(pid, _signal.SIGKILL)
            except OSError:
                continue
        _await_end(pids, 0.01)
        pids = _descendants()


def _await_end(pids: list[int], timeout: float) -> None:
    """Wait until ``pids`` have ended (the first ``WATCHED`` of them, each through a
    pidfd, so at once) or ``timeout`` seconds have passed; then reap whichever ended.
    A sandbox's first process ends after the sandbox: it takes its namespaces down."""
    poller = select.poll()
    descriptors = [fd for pid in pids[:WATCHED] if (fd := _ending(pid)) is not None]
    for descriptor in descriptors:
        poller.register(descriptor, select.POLLIN)
    deadline = time.monotonic() + timeout
    try:
        left = len(descriptors)
        while left and (remaining := deadline - time.monotonic()) > 0:
            for descriptor, _ in poller.poll(remaining * 1000):
                poller.unregister(descriptor)
                left -= 1
    finally:
        for descriptor in descriptors:
            os.close(descriptor)
    _reap(-1, 0 if descriptors else timeout)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
