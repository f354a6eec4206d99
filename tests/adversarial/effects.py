"""Finding what a bout left running: shared by harness.py and chaos.py."""

from __future__ import annotations

import os
import time
from pathlib import Path


def tagged_processes(tag: str, root: Path | None = None) -> list[str]:
    """``pid: command line`` of every live process carrying ``tag`` in its environment or
    command line, or working under ``root``."""
    needle, found = tag.encode(), []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
            cwd = os.readlink(entry / "cwd")
            state = (entry / "stat").read_text().rsplit(") ", 1)[-1]
        except OSError:
            continue
        if state.startswith("Z"):
            continue  # dead, only not yet reaped
        under = root is not None and Path(cwd).is_relative_to(root)
        if needle in cmdline or needle in environ or under:
            command = cmdline.replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{entry.name}: {command}")
    return found


def survivors(tag: str, root: Path | None = None, grace: float = 5.0) -> list[str]:
    """:func:`tagged_processes` still alive after up to ``grace`` seconds."""
    deadline = time.monotonic() + grace
    while True:
        alive = tagged_processes(tag, root)
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)
