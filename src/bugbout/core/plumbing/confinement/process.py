"""Running a child process with a timeout that kills its whole process group, and with
its output streams copied through pipes to files (which only the caller writes) up to a
size limit."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from bugbout.core.plumbing.confinement.leftovers import Leftovers
from bugbout.core.plumbing.runtime.stopping import watch

_LONGEST_POLL = 0.25
"""Seconds one ``poll`` waits at most: an interrupt raised from another thread (a Ray
worker's cancel, ``_thread.interrupt_main``) sends no signal that would end the call, and
is only handled once it returns. The end of the process still wakes it at once. Each
wake-up costs the waiting process CPU (about 50 us here): a one-second test run woke
20 times at 0.05 s, 4 times now."""
_CAPTURE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class Finished:
    """How a process ended."""

    exit_code: int | None
    """``None`` when it was killed at the timeout."""
    timed_out: bool
    duration: float


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill ``process`` and everything in its process group, and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def run_logged(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    stdin: str | None,
    timeout: float,
    stdout: Path,
    stderr: Path,
    limit: int,
    pass_fds: tuple[int, ...] = (),
    leftovers: Leftovers | None = None,
) -> Finished:
    """Run ``argv`` in a new session, with the descriptors ``pass_fds`` (a guard's
    lifeline), recorded in ``leftovers``; keep at most ``limit`` bytes of each stream."""
    started = time.monotonic()
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        pass_fds=pass_fds,
    )
    watch(process)  # a stopped bout kills its group
    if leftovers is not None:
        leftovers.add_process(process.pid)
    assert process.stdout is not None and process.stderr is not None
    copiers = [
        threading.Thread(target=_copy, args=(process.stdout, stdout, limit), daemon=True),
        threading.Thread(target=_copy, args=(process.stderr, stderr, limit), daemon=True),
    ]
    for copier in copiers:
        copier.start()
    if stdin is not None and process.stdin is not None:
        with contextlib.suppress(BrokenPipeError):
            process.stdin.write(stdin.encode())
        with contextlib.suppress(BrokenPipeError):
            process.stdin.close()
    try:
        exit_code: int | None = wait(process, timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        kill_group(process)
        exit_code, timed_out = None, True
    else:  # the agent is done: so are any daemons it left behind
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    for copier in copiers:
        copier.join(timeout=10)
    return Finished(exit_code, timed_out, time.monotonic() - started)


def wait(process: subprocess.Popen[bytes], timeout: float) -> int:
    """``process``'s exit status as soon as it ends, through a pidfd (Linux 5.3 and
    later; elsewhere subprocess polls, noticing the end up to 50 ms late);
    ``TimeoutExpired`` after ``timeout`` seconds."""
    try:
        descriptor = os.pidfd_open(process.pid)
    except (AttributeError, OSError):  # not Linux, or already reaped
        return process.wait(timeout=timeout)
    try:
        poller = select.poll()
        poller.register(descriptor, select.POLLIN)
        deadline = time.monotonic() + timeout
        while not poller.poll(min(max(deadline - time.monotonic(), 0.0), _LONGEST_POLL) * 1000):
            if time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(process.args, timeout)
    finally:
        os.close(descriptor)
    return process.wait()


def _copy(stream: IO[bytes], target: Path, limit: int) -> None:
    """Copy ``stream`` to ``target``, keeping the first ``limit`` bytes; drain the rest.
    ``target`` is created or truncated, never followed if it is a link."""
    written = 0
    fd = os.open(target, _CAPTURE_FLAGS, 0o600)
    with open(fd, "wb") as output:  # noqa: PTH123 - a descriptor
        while chunk := stream.read(65536):
            if written < limit:
                kept = chunk[: limit - written]
                output.write(kept)
                written += len(kept)
                if written >= limit:
                    output.write(b"\n[bugbout: output truncated]\n")
    stream.close()


@dataclass(frozen=True)
class ScriptRun:
    """How a script of bugbout's own ended, and what it wrote (each read bounded)."""

    finished: Finished
    stdout: str
    stderr: str


def run_script(argv: list[str], tree: Path, *, timeout: float, limit: int) -> ScriptRun:
    """Run ``argv`` (our interpreter on a script of ours, already confined by the caller)
    in ``tree``, with a scratch HOME and nothing of our environment but ``PATH``."""
    with tempfile.TemporaryDirectory(prefix="bugbout-script-") as scratch:
        out, err = Path(scratch) / "stdout", Path(scratch) / "stderr"
        finished = run_logged(
            argv,
            cwd=tree,
            env={"PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8", "HOME": scratch},
            stdin=None,
            timeout=timeout,
            stdout=out,
            stderr=err,
            limit=limit,
        )
        return ScriptRun(
            finished,
            out.read_bytes().decode("utf-8", "replace"),
            err.read_bytes().decode("utf-8", "replace"),
        )
