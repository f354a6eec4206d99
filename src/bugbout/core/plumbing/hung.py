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
            for line in lines:
                self._see(line)
            if len(chunk) < READ_LIMIT:
                return

    def _see(self, line: bytes) -> None:
        if not any(phase in line for phase in PHASES):  # a report's: nothing to follow
            return
        try:
            record = json.loads(line)
        except ValueError:
            return
        if not isinstance(record, dict):
            return
        nodeid, when = record.get("nodeid"), record.get("when")
        if when == "start" and isinstance(nodeid, str):
            self._running, self._since = nodeid, time.monotonic()
        elif when == "teardown" and nodeid == self._running:
            self._running, self._since = None, time.monotonic()
