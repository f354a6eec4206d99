"""One line of doctor's report: a :class:`Check`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Check:
    """One line of the report: what was checked, whether it passed, and the fix if not."""

    name: str
    ok: bool
    detail: str
    fix: str | None = None

    @property
    def line(self) -> str:
        text = f"{'ok' if self.ok else 'FAIL':<4}  {self.name}: {self.detail}"
        return f"{text}; fix: {self.fix}" if self.fix and not self.ok else text


Report = Callable[[Check], None]
"""Where each check goes the moment it is known (the command line prints it)."""
