"""An attempt's logs: kept out of the agent's reach while it runs, and what they say.

bugbout copies the agent's standard output and error through pipes into a folder of the
attempt that the agent can neither see nor write (``streams/``). Once every process of
the agent has stopped, the two files are moved into its log folder (``logs/``), beside
the files the agent wrote there itself; anything it left under their names is removed
and recorded as its doing. Then the adapter reads the folder, each file through
:func:`~bugbout.core.plumbing.confinement.untrusted.read_untrusted`: a file it may not read (a link,
a FIFO, a device, one too large) makes the attempt an ``agent-error`` saying so, never an
``infra-error`` that ``--retry-failed`` would pay for again.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from bugbout.core.plumbing.confinement.process import Finished
from bugbout.core.plumbing.confinement.untrusted import (
    UntrustedFileError,
    describe,
    read_untrusted,
    shown,
)
from bugbout.core.plumbing.trees.checkout import remove_tree
from bugbout.core.race.agents import CodingAgent
from bugbout.core.race.never_ran import never_ran
from bugbout.core.store.race_records import AttemptStatus

STREAMS = ("stdout.log", "stderr.log")
"""The files bugbout writes: what the agent printed."""
ERROR_LINE_BYTES = 64_000
"""How much of the end of ``stderr.log`` is searched for the error line."""


@dataclass(frozen=True)
class Captures:
    """Where bugbout writes what the agent prints while it runs."""

    folder: Path

    @property
    def stdout(self) -> Path:
        return self.folder / STREAMS[0]

    @property
    def stderr(self) -> Path:
        return self.folder / STREAMS[1]

    def create(self) -> Captures:
        self.folder.mkdir(parents=True)
        return self

    def publish(self, logdir: Path) -> str | None:
        """Move the captures into ``logdir`` once the agent has stopped; what the agent
        had put under their names there, if anything (it is removed)."""
        found = None
        mode = logdir.lstat().st_mode  # the agent may have locked its folder: bugbout's
        logdir.chmod(stat.S_IMODE(mode) | stat.S_IRWXU)
        for name in STREAMS:
            target = logdir / name
            try:
                mode = os.lstat(target).st_mode
            except FileNotFoundError:
                pass
            else:
                found = found or (
                    f"the agent wrote {shown(target)} itself ({describe(target, mode)}), "
                    "where bugbout keeps what it printed"
                )
                if stat.S_ISDIR(mode):
                    remove_tree(target)
                else:
                    target.unlink()
            source = self.folder / name
            if source.exists():
                source.replace(target)
        self.folder.rmdir()
        return found


@dataclass(frozen=True)
class Ending:
    """How an attempt ended, as its logs tell."""

    status: AttemptStatus
    summary: str
    usage: dict[str, int]
    error: str | None


def conclude(
    agent: CodingAgent, logdir: Path, ended: Finished, *, empty_patch: bool, tampered: str | None
) -> Ending:
    """The attempt's status, summary, usage and error, read from ``logdir`` by its
    adapter. ``tampered`` (what the agent did to bugbout's own logs) or a log the adapter
    may not read makes it an ``agent-error`` with that reason, whatever else happened."""
    try:
        summary, usage = agent.parse(logdir)
    except Exception as exc:
        tampered = tampered or _unreadable(exc)
        summary, usage = _fallback_summary(agent, logdir), {}
    limited = False
    if tampered is None and not ended.timed_out and empty_patch:
        try:
            limited = agent.hit_usage_limit(logdir, ended.exit_code)
        except Exception as exc:
            tampered = _unreadable(exc)
    if tampered is not None:
        return Ending(AttemptStatus.AGENT_ERROR, summary, usage, tampered[:500])
    if ended.timed_out:
        status = AttemptStatus.TIMEOUT
    elif limited:
        status = AttemptStatus.QUOTA
    elif ended.exit_code == 0:
        status = AttemptStatus.FINISHED
    else:
        last = last_line(logdir / STREAMS[1])
        first = first_line(logdir / STREAMS[1])
        left_nothing = empty_patch and not any(usage.values())
        if why := never_ran(ended.exit_code, first, last, left_nothing=left_nothing):
            return Ending(AttemptStatus.INFRA_ERROR, summary, usage, why)
        return Ending(AttemptStatus.AGENT_ERROR, summary, usage, last)
    return Ending(status, summary, usage, None)


def last_line(path: Path) -> str | None:
    """The last non-blank line of a log (at most 500 characters), if any."""
    try:
        text = read_untrusted(path, limit=ERROR_LINE_BYTES, tail=True) or ""
    except UntrustedFileError as exc:
        return str(exc)[:500]
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1][:500] if lines else None


def first_line(path: Path) -> str | None:
    """The first non-blank line of a log (at most 500 characters), if any."""
    try:
        text = read_untrusted(path, limit=ERROR_LINE_BYTES) or ""
    except UntrustedFileError:
        return None  # larger than the bound: an agent that ran and printed
    return next((line[:500] for line in text.splitlines() if line.strip()), None)


def _unreadable(error: Exception) -> str:
    if isinstance(error, UntrustedFileError):
        return str(error)
    return f"its logs could not be read: {type(error).__name__}: {error}"


def _fallback_summary(agent: CodingAgent, logdir: Path) -> str:
    """The end of ``stdout.log``, when the adapter could not read its logs."""
    try:
        return CodingAgent.parse(agent, logdir)[0]
    except UntrustedFileError:
        return ""
