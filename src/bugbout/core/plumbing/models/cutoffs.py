"""Knowledge cutoffs: the date after which a model saw no training data.

A contestant declares its own (``knowledge-cutoff: 2024-06-01`` in its entry of
``bugbout.yaml``, or ``contestant.<name>.knowledge-cutoff=...`` on the command line);
without one, the packaged table ``knowledge-cutoffs.json`` gives the cutoff of the
model it runs, when the model is known there. A task fixed on or before the cutoff may
be in what the model learned from; one fixed after it cannot be.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from fnmatch import fnmatchcase
from functools import cache
from importlib import resources

from bugbout.core.contract.errors import ConfigError

RESOURCE = "knowledge-cutoffs.json"
"""The packaged table, in :mod:`bugbout.core`: ``{"models": [{"pattern", "cutoff"}]}``."""
KEY = "knowledge-cutoff"
"""The key of a contestant's entry that declares its cutoff."""


@cache
def packaged_cutoffs() -> tuple[tuple[str, str], ...]:
    """The packaged ``(pattern, cutoff)`` pairs, in the order they are tried."""
    text = resources.files(__package__).joinpath(RESOURCE).read_text("utf-8")
    return tuple((row["pattern"], row["cutoff"]) for row in json.loads(text)["models"])


def default_cutoff(model: str | None) -> str | None:
    """The packaged cutoff of ``model`` (its whole name or the part after the last
    ``/``, case ignored): the first pattern that matches; ``None`` when none does."""
    if not model:
        return None
    names = {model.lower(), model.lower().rsplit("/", 1)[-1]}
    for pattern, cutoff in packaged_cutoffs():
        if any(fnmatchcase(name, pattern) for name in names):
            return cutoff
    return None


def parse_cutoff(name: str, value: object) -> str:
    """A declared cutoff as ``YYYY-MM-DD``; a one-line error when it is not a date."""
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    try:
        return date.fromisoformat(str(value).strip()).isoformat()
    except ValueError:
        raise ConfigError(
            f"contestant {name!r}: {KEY} {value!r} is not a date; write it as 2024-06-01"
        ) from None


def fixed_before(task_date: str, cutoff: str) -> bool:
    """Whether a fix committed at ``task_date`` (ISO 8601) is on or before ``cutoff``."""
    return task_date[:10] <= cutoff
