"""``bugbout compare A B``: read both sides, pair them, render, and say which regressed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bugbout.compare.compare_render import check_format, render_change
from bugbout.compare.pairing import BoutChange, ContestantChange, pair
from bugbout.compare.sides import read_side
from bugbout.core.contract.errors import ConfigError


@dataclass(frozen=True)
class Compared:
    """What the command prints, and the lines that fail it (one per regression)."""

    text: str
    failures: list[str]


def run_compare(before: Path, after: Path, format: str, threshold: str | None) -> Compared:
    """``after`` against ``before`` rendered in ``format``; with ``threshold`` (points, as
    ``5`` or ``5%``), a failure per contestant that regressed by more."""
    check_format(format)  # before either bout is read
    points = _points(threshold) if threshold is not None else None
    change = pair(read_side(before), read_side(after), points)
    gate = points is not None
    failures = [regression(c, change) for c in change.contestants if c.regressed and gate]
    return Compared(render_change(change, format), failures)


def regression(c: ContestantChange, change: BoutChange) -> str:
    """``codex regressed: 14/20 (70%) before, 6/20 (30%) after ...`` in one line."""
    return (
        f"{c.contestant} regressed: {c.before.resolved}/{c.tasks} ({c.before.rate:.0%}) in "
        f"{change.before}, {c.after.resolved}/{c.tasks} ({c.after.rate:.0%}) in "
        f"{change.after} on the same tasks, {c.difference * 100:+.0f} points (more than "
        f"{change.threshold:g} down), Holm-adjusted exact McNemar p = {c.p_adjusted:.2g}"
    )


def _points(text: str) -> float:
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        value = -1.0
    if not 0 <= value <= 100:
        raise ConfigError(
            f"--fail-if-regressed {text}: give the drop in percentage points, 0 to 100 (e.g. 5)"
        )
    return value
