"""How long work reports its progress, without tying the core to a terminal."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


class Progress(Protocol):
    """Receives progress from a stage; the CLI renders it with rich or as plain lines."""

    def start(self, description: str, total: int | None = None) -> None:
        """A stage starts, with ``total`` steps when known."""
        ...

    def advance(self, detail: str = "") -> None:
        """One step of the current stage is done."""
        ...

    def finish(self) -> None:
        """The current stage is done."""
        ...

    def warn(self, message: str) -> None:
        """Something the user should know, in one line."""
        ...


class SilentProgress:
    """Progress that is not shown; warnings are kept for the caller."""

    def __init__(self) -> None:
        self.warnings: list[str] = []

    def start(self, description: str, total: int | None = None) -> None:
        pass

    def advance(self, detail: str = "") -> None:
        pass

    def finish(self) -> None:
        pass

    def warn(self, message: str) -> None:
        self.warnings.append(message)


@dataclass(frozen=True)
class ProgressEvent:
    """One thing a stage reported, for a callback: ``kind`` is ``start``, ``advance``,
    ``finish`` or ``warn``; ``done`` of ``total`` steps of the stage ``description``."""

    kind: str
    description: str
    done: int = 0
    total: int | None = None
    detail: str = ""


class LoggedProgress:
    """Progress passed on to ``inner`` (when any) and to the ``bugbout`` logger: a stage's
    start and end at INFO, each step at DEBUG, warnings at WARNING; when given, to a
    callback as :class:`ProgressEvent` values; and, while ``record`` is set, to that
    logger too (a bout's own log, whatever the application's logging lets through)."""

    def __init__(
        self,
        inner: Progress | None = None,
        callback: Callable[[ProgressEvent], None] | None = None,
    ) -> None:
        self.inner = inner
        self.callback = callback
        self.logger = logging.getLogger("bugbout")
        self.record: logging.Logger | None = None
        self.warnings: list[str] = []
        self._stage, self._done = "", 0
        self._total: int | None = None

    def start(self, description: str, total: int | None = None) -> None:
        self._stage, self._done, self._total = description, 0, total
        self._log(logging.INFO, "%s%s", description, f" ({total})" if total is not None else "")
        self._tell("start", "")
        if self.inner is not None:
            self.inner.start(description, total)

    def advance(self, detail: str = "") -> None:
        self._done += 1
        shown = f" {detail}" if detail else ""
        self._log(logging.DEBUG, "%s: %s%s", self._stage, self._done, shown)
        self._tell("advance", detail)
        if self.inner is not None:
            self.inner.advance(detail)

    def finish(self) -> None:
        self._log(logging.INFO, "%s: done (%s)", self._stage, self._done)
        self._tell("finish", "")
        if self.inner is not None:
            self.inner.finish()

    def warn(self, message: str) -> None:
        self.warnings.append(message)
        self._log(logging.WARNING, "%s", message)
        self._tell("warn", message)
        if self.inner is not None:
            self.inner.warn(message)

    def _log(self, level: int, message: str, *args: object) -> None:
        self.logger.log(level, message, *args)
        if self.record is not None:
            self.record.log(level, message, *args)

    def _tell(self, kind: str, detail: str) -> None:
        if self.callback is not None:
            self.callback(ProgressEvent(kind, self._stage, self._done, self._total, detail))
