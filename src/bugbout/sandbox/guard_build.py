"""Compiling the guard: ``guard.c``, the compiled form of ``guard.py`` (the same command
line, behaviour and exit statuses), built once per machine with its C compiler.

Every attempt starts the guard; an interpreter alone takes longer to start than the
compiled guard takes to run a command that does nothing. The program is kept in a folder
of bugbout's cache under a name made of the source's hash and the machine (its processor
and C library), so a changed source or another machine (one ``BUGBOUT_HOME`` shared by
workers) gets its own. It is compiled to a temporary name, tried, then renamed: two bouts
compiling at once each rename a whole program over the same name.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
from importlib import resources
from pathlib import Path

from bugbout.core.contract.errors import BugboutError

COMPILE_TIMEOUT = 120.0
"""Seconds the compiler may take (it takes under one on an idle machine)."""
TRY_TIMEOUT = 10.0
"""Seconds the compiled program may take to refuse an empty command line."""
USAGE = 2
"""The guard's exit status on a bad command line."""


class CompileFailed(BugboutError):
    """The guard cannot be compiled here: bugbout runs ``guard.py`` instead."""


def compiled_guard(folder: Path) -> Path:
    """The compiled guard, kept in ``folder``; compiled first when it is not there yet,
    with ``CC`` (default ``cc``). :class:`CompileFailed` says why it cannot be."""
    if not sys.platform.startswith("linux"):
        raise CompileFailed("the compiled guard reads Linux's /proc")
    source = resources.files("bugbout.sandbox") / "guard.c"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    program = folder / f"guard-{digest}-{_machine()}"
    if os.access(program, os.X_OK):
        return program
    compiler = shlex.split(os.environ.get("CC") or "cc")
    if not compiler or shutil.which(compiler[0]) is None:
        raise CompileFailed(f"no C compiler ({' '.join(compiler) or 'CC is empty'})")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CompileFailed(f"cannot create {folder}: {exc.strerror}") from exc
    temporary = folder / f".{program.name}.{os.getpid()}.{secrets.token_hex(4)}"
    try:
        with resources.as_file(source) as path:
            _run([*compiler, "-O2", "-o", str(temporary), str(path)], COMPILE_TIMEOUT)
        _run([str(temporary)], TRY_TIMEOUT, expected=USAGE)  # it runs, and refuses
        temporary.replace(program)
    finally:
        temporary.unlink(missing_ok=True)
    return program


def _machine() -> str:
    """This machine as the program's name tells it: ``linux-x86_64-glibc2.36``."""
    machine = os.uname()
    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION") or "libc"
    except (ValueError, OSError):  # not glibc
        libc = "libc"
    return "-".join((machine.sysname, machine.machine, libc.replace(" ", ""))).lower()


def _run(argv: list[str], timeout: float, expected: int = 0) -> None:
    """Run ``argv`` in its own process group, killed whole at ``timeout``;
    :class:`CompileFailed` unless it exits with ``expected``."""
    try:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    except OSError as exc:
        raise CompileFailed(f"cannot run {argv[0]}: {exc.strerror}") from exc
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # the compiler's own children with it
        process.communicate()
        raise CompileFailed(f"{argv[0]} took more than {timeout:.0f} s") from None
    if process.returncode != expected:
        lines = output.decode(errors="replace").strip().splitlines() or ["no output"]
        said = next((line for line in lines if "error" in line), lines[-1])
        raise CompileFailed(f"{argv[0]} exited with {process.returncode}: {said}")
