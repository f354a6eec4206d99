"""What a run started, by identity, so that it is ended for sure: when the run is over,
and by the next bugbout when this one died first.

A record (JSON lines, one per thing started) names a process by its pid, its start time
(clock ticks since boot, from ``/proc/<pid>/stat``) and the machine's boot, and a podman
container by its name with the podman command and configuration that remove it (the
container runner adds those: :data:`VARIABLE`). Ending a record kills the process group
each recorded process led (each run leads one) while it is still the same process, or what
is left of its group once it is gone, and removes each container; nothing is looked for by
name or command line. A record another machine
wrote (a Ray worker's) names nothing here: only its containers are removed.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import socket
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

VARIABLE = "BUGBOUT_LEFTOVERS"
"""The variable that names the record to the container runner, which adds its container
(:mod:`bugbout.sandbox.podman.runner`) and never passes the variable on."""
REMOVE_TIMEOUT = 60.0
"""Seconds ``podman rm`` may take."""
READ_LIMIT = 1_000_000
"""The most bytes read of a record."""
SUFFIX = ".leftovers"
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC


def boot() -> str:
    """This boot of this machine: a pid and a start time mean one process within it."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return socket.gethostname()


def started(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks since boot; ``None`` once it is gone
    (or only a zombie)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] == b"Z" else int(fields[19])


@dataclass(frozen=True)
class Leftovers:
    """One run's record of what it started, at ``path`` (a place the run cannot write)."""

    path: Path

    def add_process(self, pid: int) -> None:
        """Record process ``pid`` (the leader of its process group), as it is now."""
        start = started(pid)
        if start is not None:
            self._add({"boot": boot(), "pid": pid, "start": start})

    def end(self) -> None:
        """Kill every recorded process still alive as the same process, with its group,
        remove every recorded container, then the record."""
        try:
            with self.path.open("rb") as handle:
                lines = handle.read(READ_LIMIT).splitlines()
        except FileNotFoundError:
            return
        this = boot()
        for line in lines:
            with contextlib.suppress(ValueError, TypeError, KeyError, AttributeError):
                entry = json.loads(line)
                if "pid" in entry and entry["boot"] == this:
                    _kill(int(entry["pid"]), int(entry["start"]))
                elif "container" in entry:
                    _remove(str(entry["container"]), entry["podman"], entry["config"])
        self.path.unlink(missing_ok=True)

    @classmethod
    def of_this_process(cls, folder: Path) -> Leftovers:
        """A new record in ``folder`` (a place that outlives a crash), named by this
        process; first, once per process, end the records of processes that are gone
        (a bugbout killed with ``kill -9`` leaves its test runs' containers running)."""
        _end_orphans_once(folder)
        me = os.getpid()
        return cls(folder / f"{me}-{started(me)}-{uuid.uuid4().hex}{SUFFIX}")

    def _add(self, entry: dict[str, object]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(self.path, _FLAGS, 0o600)
        with os.fdopen(descriptor, "a") as handle:
            handle.write(json.dumps(entry) + "\n")


def _kill(pid: int, start: int) -> None:
    """Kill the process group ``pid`` led when it started at ``start``: at once while
    ``pid`` is still that process; once it is gone, each process of its group (the kernel
    gives no new process the group's number while one is left in it) that started after
    it did. An empty group (as a run leaves it, most often) costs no look at every process."""
    now = started(pid)
    if now is not None:
        if now == start:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        return
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return
    except PermissionError:
        pass  # a group this process may not signal: looked at as before
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError, IndexError, PermissionError):
            fields = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()
            if entry.name.isdigit() and int(fields[2]) == pid and int(fields[19]) >= start:
                os.kill(int(entry.name), signal.SIGKILL)


def _remove(name: str, podman: list[str], config: dict[str, str]) -> None:
    """Remove the container ``name`` with ``podman`` (its command, ``--url`` included) and
    its configuration (``CONTAINERS_CONF``, ...); nothing when it is gone already."""
    if not name.startswith("bugbout-") or not all(isinstance(part, str) for part in podman):
        return
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(
            [*podman, "rm", "--force", "--ignore", "--time", "0", name],
            env={**os.environ, **{str(k): str(v) for k, v in config.items()}},
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            timeout=REMOVE_TIMEOUT, check=False,
        )  # fmt: skip


def end_orphans(folder: Path) -> None:
    """End every record in ``folder`` whose process (named in the record's name) is gone."""
    for path in folder.glob(f"*{SUFFIX}"):
        owner, _, rest = path.name.partition("-")
        start = rest.partition("-")[0]
        if owner.isdigit() and start.isdigit() and started(int(owner)) != int(start):
            Leftovers(path).end()


@functools.cache
def _end_orphans_once(folder: Path) -> None:
    end_orphans(folder)
