"""How long work reports its progress, without tying the core to a terminal."""

from __future__ import annotations

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
