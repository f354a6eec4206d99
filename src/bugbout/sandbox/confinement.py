"""What a confined process may see and do, and the sandbox protocol that enforces it."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict


class Confinement(BaseModel):
    """The limits of one confined process.

    Paths are absolute. ``masked`` paths are hidden (an empty directory or file in their
    place); ``readable`` paths are exposed read-only even inside a masked one (e.g. the
    test environment inside ``BUGBOUT_HOME``); ``writable`` paths are exposed read-write
    even inside a masked one. Everything else of the machine is read-only. Writes to
    the system temporary directory go to a private, empty one.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    workdir: Path
    """The working directory (normally the checkout); always writable."""
    writable: tuple[Path, ...] = ()
    readable: tuple[Path, ...] = ()
    masked: tuple[Path, ...] = ()
    tmp_size: int | None = None
    """The most bytes each private temporary filesystem may hold (they are memory-backed);
    ``None``: the sandbox's default (bubblewrap: half the machine's memory)."""
    network: bool = False
    """Whether the process keeps the network (only an agent process that must reach its
    model); shell commands and test runs never do."""


class Sandbox(Protocol):
    """What a sandbox plugin's factory returns.

    The command a sandbox wraps may run inside a private user and mount namespace that
    mounts the attempt's overlay working copy (:mod:`bugbout.sandbox.overlay`). A sandbox
    whose commands cannot (podman, which sets up namespaces of its own) has a class
    attribute ``overlays = False``: its agents get copies."""

    name: str

    def problem(self) -> str | None:
        """``None`` when the sandbox works on this machine, else why not and how to fix it,
        in one line."""
        ...

    def wrap(self, argv: list[str], confinement: Confinement) -> list[str]:
        """``argv`` wrapped so that it runs under ``confinement``."""
        ...
