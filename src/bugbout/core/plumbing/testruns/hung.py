"""Finding a test that hangs while pytest still runs, from the outcome stream it writes.

A bug that makes one test loop forever must not cost the whole run: the watch reads the
outcome lines as they arrive (at its own offset, never moving the writer's) and names the
test that started and has not reached its teardown for longer than the project's
``test-timeout``. The run then kills pytest and sets that test aside as failed, like a
test that crashed it. Only the node id is read here, unverified: what counts as evidence
is the authenticated stream read once pytest has ended.
"""

from __future__ import annotations

import json
import os
import time

READ_LIMIT = 1 << 20
"""The most bytes read per poll: a run's stream is read in steps, never all at once."""
PHASES = (b'"when": "start"', b'"when": "teardown"')
"""What the lines the watch follows hold, as the plugin writes them (the others, most
of a run's, are not parsed)."""


class HangWatch:
    """Polls an outcome file that another process appends to."""

    def __init__(self, fd: int, limit: float) -> None:
        self._fd = fd
        self._limit = limit
        self._offset = 0
        self._partial = b""
        self._running: str | None = None
        self._since = time.monotonic()

    def hung(self) -> str | None:
        """The node id of the test running for longer than the limit, else ``None``."""
        self._read()
        if self._running is None or time.monotonic() - self._since < self._limit:
            return None
        return self._running

    def _read(self) -> None:
        while chunk := os.pread(self._fd, READ_LIMIT, self._offset):
            self._offset += len(chunk)
            *lines, self._partial = (self._partial + chunk).split(b"\n")
            self._follow(lines)
            if len(chunk) < READ_LIMIT:
                return

    def _follow(self, lines: list[bytes]) -> None:
        """See ``lines`` from the last test that started among them: what came before it
        cannot change which test runs now (a start says it whatever ran before)."""
        for first in range(len(lines) - 1, -1, -1):
            found = _event(lines[first]) if PHASES[0] in lines[first] else None
            if found is not None and found[1] == "start":
                self._running, self._since = found[0], time.monotonic()
                break
        else:
            first = -1
        for line in lines[first + 1 :]:
            self._see(line)

    def _see(self, line: bytes) -> None:
        found = _event(line)
        if found is None:
            return
        nodeid, when = found
        if when == "start":
            self._running, self._since = nodeid, time.monotonic()
        elif when == "teardown" and nodeid == self._running:
            self._running, self._since = None, time.monotonic()


def _event(line: bytes) -> tuple[str, str] | None:
    """The node id and phase of a start or teardown line, else ``None`` (the others, most
    of a run's, are not parsed)."""
    if not any(phase in line for phase in PHASES):
        return None
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    nodeid, when = record.get("nodeid"), record.get("when")
    if when == "start" and isinstance(nodeid, str):
        return nodeid, when
    if when == "teardown":
        return (nodeid if isinstance(nodeid, str) else "", when)
    return None
