"""Holding an agent attempt to the ``limits:`` settings.

Two parts enforce them. The patch's size and file count are checked while the patch is
computed (``bugbout.core.plumbing.trees.patch``). Memory, process count and the growth of the
writable folders are watched while the agent runs by the guard, a small supervisor put in front of
the agent's command (outside its sandbox): ``bugbout/sandbox/guard.c`` compiled once
(:func:`guard_program`), or ``bugbout/sandbox/guard.py`` where no C compiler works. The
guard also caps the size of any file it writes (``RLIMIT_FSIZE``). The sandbox sizes its
private temporary filesystems. Every limit an agent goes past is a ``LimitExceeded``
message naming the limit, what was used and the setting to raise.
"""

from __future__ import annotations

import dataclasses
import errno
import functools
import json
import os
import stat
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from bugbout.core.contract.errors import BugboutError
from bugbout.core.contract.settings import LimitsSettings, TestLimitsSettings
from bugbout.core.plumbing.confinement.lifeline import lifeline
from bugbout.sandbox.guard_build import CompileFailed, compiled_guard

if TYPE_CHECKING:  # confine builds on this module
    from bugbout.core.plumbing.confinement.confine import Confine

GUARD = Path(str(resources.files("bugbout.sandbox") / "guard.py"))
"""The guard script, standard library only, so it starts fast."""
_START = (
    "import sys; sys.path.append({folder!r}); from guard import main; sys.exit(main(sys.argv[1:]))"
)
"""How the interpreter runs the guard: imported (its compiled form is cached beside it,
where a script given by path is compiled on every start), after the standard library."""
GUARD_FOLDER = "guard"
"""The folder of ``BUGBOUT_HOME`` that keeps the compiled guard."""
REPORT_LIMIT = 4096
"""The most bytes read of the guard's report."""

WHAT = {
    "patch-size": "patch too large",
    "files": "too many files",
    "disk": "disk limit exceeded",
    "memory": "memory limit exceeded",
    "processes": "too many processes",
}
GUARDED = ("memory", "processes", "disk", "files")
"""The limits the guard holds the agent to while it runs."""
COUNTED = frozenset({"files", "processes"})
"""Limits that count things; the others are bytes."""


class LimitExceeded(BugboutError):
    """An agent went past one of its limits: its doing, an ``agent-error``."""


def exceeded(limit: str, used: int, allowed: int, group: str = "limits") -> str:
    """The one-line reason: ``patch too large (612 MB > 10 MB limit; setting
    limits.patch-size)``; ``group`` is where the setting lives (``limits.tests``)."""
    return f"{WHAT[limit]} ({_amounts(limit, used, allowed)} limit; setting {group}.{limit})"


def _amounts(limit: str, used: int, allowed: int) -> str:
    """``used > allowed``, in MB as round as they stay apart, else exactly."""
    if limit not in COUNTED and used >= 1_000_000:
        for decimals in (0, 1):
            shown = [f"{amount / 1e6:,.{decimals}f} MB" for amount in (used, allowed)]
            if shown[0] != shown[1]:
                return " > ".join(shown)
    unit = "" if limit in COUNTED else " bytes"
    return f"{used:,}{unit} > {allowed:,}{unit}"


@dataclass(frozen=True)
class Guard:
    """The guard of one agent run: what it watches and where it reports."""

    limits: LimitsSettings | TestLimitsSettings
    watched: tuple[Path, ...]
    """The folders the agent may write to (its checkout first): their growth is limited."""
    report: Path
    """Where the guard writes the limit the agent went past; a path the agent cannot write."""
    program: Path | None = None
    """The compiled guard (:func:`guard_program`); ``None``: guard.py, run by this Python."""
    lifeline: int | None = None
    """The read end of bugbout's lifeline (:mod:`bugbout.core.plumbing.confinement.lifeline`),
    passed to the guard (:attr:`fds`): once bugbout has ended, the guard kills what it guards."""
    group: str = "limits"
    """Where the limits are set, as the breach names them: ``limits.tests`` for test runs."""

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` run under the guard."""
        watched = [  # a folder inside another is measured with it, once
            str(path)
            for path in self.watched
            if not any(path != other and path.is_relative_to(other) for other in self.watched)
        ]
        options = [f"--{name}={getattr(self.limits, name)}" for name in GUARDED]
        # -S: the guard needs no site-packages, and no .pth file runs code in it
        start = (
            [str(self.program)]
            if self.program is not None
            else [sys.executable, "-I", "-S", "-c", _START.format(folder=str(GUARD.parent))]
        )
        return [
            *start, f"--report={self.report}", *options,
            *(f"--watch={path}" for path in watched),
            *([f"--lifeline={self.lifeline}"] if self.lifeline is not None else []), "--", *argv,
        ]  # fmt: skip

    @property
    def fds(self) -> tuple[int, ...]:
        """The descriptors the guard's process must inherit (``pass_fds``)."""
        return (self.lifeline,) if self.lifeline is not None else ()

    def breach(self) -> str | None:
        """The limit the agent went past, as a reason; ``None`` when it kept to them."""
        try:
            descriptor = os.open(self.report, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                return None
            return f"the guard's report {self.report} cannot be read: {exc.strerror}"
        with os.fdopen(descriptor, "rb") as handle:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                return f"the guard's report {self.report} is not a file"
            data = handle.read(REPORT_LIMIT)
        try:
            found = json.loads(data)
            limit, used, allowed = str(found["limit"]), int(found["used"]), int(found["allowed"])
            return exceeded(limit, used, allowed, self.group)
        except (ValueError, KeyError, TypeError):
            return f"the guard's report {self.report} is not readable"


def compile_guard(home: Path) -> Path:
    """The compiled guard, kept in ``home/guard`` (compiled there first when it is not);
    :class:`CompileFailed` says why it cannot be."""
    return compiled_guard(home / GUARD_FOLDER)


def guard_program(home: Path) -> Path | None:
    """The compiled guard (:func:`compile_guard`); ``None`` where it cannot be compiled:
    guard.py then runs, the same guard started more slowly."""
    try:
        return compile_guard(home)
    except CompileFailed:
        return None


@dataclass(frozen=True)
class HeldConfine:
    """How test runs are confined (a ``Confine``: ``confine(argv, tree, writable)``), and
    the limits the guard holds each run to (:func:`run_guard`)."""

    confine: Confine
    limits: TestLimitsSettings
    home: Path
    """``BUGBOUT_HOME``, where the compiled guard is kept."""

    @property
    def overlays(self) -> bool:
        """Whether the confined command can run where an overlay test tree is mounted."""
        return bool(getattr(self.confine, "overlays", True))

    def __call__(self, argv: list[str], tree: Path, writable: tuple[Path, ...]) -> list[str]:
        return self.confine(argv, tree, writable)


def held_as(
    confine: Confine,
    wrapped: Confine,
) -> Confine:
    """``wrapped`` (a confinement built on ``confine``) held to ``confine``'s limits."""
    if isinstance(confine, HeldConfine):
        return dataclasses.replace(confine, confine=wrapped)
    return wrapped


def run_guard(
    confine: Confine,
    watched: tuple[Path, ...],
    report: Path,
) -> Guard | None:
    """The guard of one test run confined by ``confine``: ``limits.tests`` on the processes
    it starts and on the growth of ``watched``, its breach written to ``report``, and
    bugbout's lifeline; ``None`` when ``confine`` holds runs to no limits."""
    if not isinstance(confine, HeldConfine):
        return None
    program = _program(confine.home)
    return Guard(confine.limits, watched, report, program, lifeline(), "limits.tests")


@functools.lru_cache(maxsize=8)
def _program(home: Path) -> Path | None:
    """:func:`guard_program`, looked for once per process."""
    return guard_program(home)
