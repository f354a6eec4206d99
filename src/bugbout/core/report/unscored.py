"""Attempts the report does not score, and the line that says so at the top.

A contestant's latest attempt on a scored task that ended on ``quota``, ``infra-error``
or ``interrupted`` is left out of every count and rate: no patch of its agent was
judged, so it is neither a success nor a failure of the agent. An agent that never ran
inside the sandbox (a program or package it hides) ends so. When most attempts are
unscored, the bout's figures say little: the report opens with a warning, and with
``run.max-unscored`` the bout fails (as Inspect's ``fail_on_error`` does). Attempts
``run.budget`` kept from starting are not counted here: they are not the setup's doing,
and the costs section says how many there are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import Field

from bugbout.core.plumbing.models.budget import not_run_reason
from bugbout.core.store.race_records import RETRYABLE, Attempt
from bugbout.core.store.records import Record


class Unscored(Record):
    """The contestants' attempts the report could not score."""

    attempts: int = 0
    """Contestants' latest attempts on scored tasks."""
    unscored: int = 0
    """Of those, attempts that ended on ``quota``, ``infra-error`` or ``interrupted``."""
    statuses: dict[str, int] = Field(default_factory=dict)
    """``unscored`` by how the attempts ended."""
    commonest: str | None = None
    """The error most of them ended with, and how many did."""
    warning: str | None = None
    """The report's first line when most attempts are unscored."""

    @property
    def fraction(self) -> float:
        return self.unscored / self.attempts if self.attempts else 0.0


def unscored(latest: Iterable[Attempt], scored: set[str]) -> Unscored:
    """What was left unscored among the contestants' ``latest`` attempts on ``scored`` tasks."""
    counted = [
        a
        for a in latest
        if a.role == "contestant" and a.task_id in scored and not_run_reason(a) is None
    ]
    left = [a for a in counted if a.status in RETRYABLE]
    found = Unscored(
        attempts=len(counted),
        unscored=len(left),
        statuses=dict(sorted(Counter(a.status.value for a in left).items())),
    )
    errors = Counter(a.error.splitlines()[0][:300] for a in left if a.error)
    if errors:
        error, count = errors.most_common(1)[0]
        found.commonest = f"{error} ({count} of {len(left)})"
    if left and 2 * len(left) > len(counted):
        found.warning = _warning(found)
    return found


def too_many(found: Unscored, most: float) -> str | None:
    """The one line that fails a bout whose unscored share is above ``most``
    (``run.max-unscored``), or ``None``."""
    if not found.attempts or found.fraction <= most:
        return None
    return (
        f"{found.unscored} of {found.attempts} attempts ({found.fraction:.0%}) were not scored, "
        f"more than run.max-unscored={most:g}: {_how(found)}; the report is written, fix the "
        "setup (`bugbout doctor`) and run `bugbout run --retry-failed`"
    )


def _warning(found: Unscored) -> str:
    return (
        f"Not scored: {found.unscored} of {found.attempts} attempts ({found.fraction:.0%}); "
        f"{_how(found)}. They are left out of every rate, not counted as the agents' "
        "failures: fix the setup (`bugbout doctor`), then `bugbout run --retry-failed`."
    )


def _how(found: Unscored) -> str:
    how = ", ".join(f"{status} {count}" for status, count in found.statuses.items())
    return f"{how}, most often: {found.commonest}" if found.commonest else how
