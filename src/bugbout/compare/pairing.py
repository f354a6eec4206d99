"""Two sides paired per contestant: the tasks both scored against the same ground truth,
the statistics the report uses on them, and which contestants regressed."""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from typing import Any

from pydantic import Field

from bugbout.compare.sides import Side
from bugbout.core.report.confidence import METHOD, RateInterval, interval
from bugbout.core.report.statistics import LEVEL, Comparison, adjusted, compare, wilson
from bugbout.core.store.records import Record

SCHEMA_VERSION = "bugbout.compare/1"
"""The value of the comparison's ``schema`` key; it changes when its shape does."""
SCHEMA_RESOURCE = "compare.schema.json"
"""The comparison's JSON Schema, shipped in :mod:`bugbout.schemas`."""

NOT_IN_BEFORE = "not a scored task of the first"
NOT_IN_AFTER = "not a scored task of the second"
TRUTH_CHANGED = "ground truth differs"
UNCOUNTED_BEFORE = "no counted score in the first"
UNCOUNTED_AFTER = "no counted score in the second"


class ContestantChange(Record):
    """One contestant in both bouts, over the tasks both scored it on."""

    contestant: str
    tasks: int
    """Tasks paired: the same id and ground truth key, a counted score in both."""
    left_out: dict[str, int] = Field(default_factory=dict)
    """Tasks of either side left out of the pairing, by reason."""
    before: RateInterval
    after: RateInterval
    both: int
    """Paired tasks resolved in both."""
    only_before: int
    """Paired tasks resolved in the first only (lost)."""
    only_after: int
    """Paired tasks resolved in the second only (gained)."""
    difference: float
    """The second's rate minus the first's on the paired tasks."""
    low: float
    high: float
    level: float
    """The confidence level of ``low`` to ``high`` (above 95% when Holm-adjusted)."""
    p_value: float
    """Exact McNemar on the paired tasks."""
    p_adjusted: float
    """``p_value`` Holm-adjusted over every contestant compared."""
    tasks_needed: int | None = None
    regressed: bool = False
    """``difference`` below minus the threshold, and ``p_adjusted`` below 0.05."""
    sentence: str


class BoutChange(Record):
    """What ``bugbout compare`` says; its JSON output is this record's dump."""

    schema_version: str = Field(default=SCHEMA_VERSION, alias="schema")
    method: str = METHOD
    before: str
    """The first source (the baseline), as given."""
    after: str
    """The second source, as given."""
    threshold: float | None = None
    """The drop, in percentage points, beyond which a significant one fails the
    comparison (``--fail-if-regressed``); ``None``: none given."""
    contestants: list[ContestantChange] = Field(default_factory=list)
    only_before: list[str] = Field(default_factory=list)
    """Contestants of the first bout only: not compared."""
    only_after: list[str] = Field(default_factory=list)
    """Contestants of the second bout only: not compared."""
    regressed: list[str] = Field(default_factory=list)

    def to_json(self, *, indent: int | None = 2) -> str:
        """The comparison as JSON, valid against the shipped schema."""
        return self.model_dump_json(by_alias=True, indent=indent)


def compare_schema() -> dict[str, Any]:
    """The comparison's JSON Schema (draft 2020-12), as shipped with the package."""
    text = resources.files("bugbout.schemas").joinpath(SCHEMA_RESOURCE).read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def pair(before: Side, after: Side, threshold: float | None = None) -> BoutChange:
    """``after`` against ``before``, contestant by contestant, Holm-adjusted across those
    with paired tasks; a contestant regressed when its rate fell by more than
    ``threshold`` points (0 when ``None``) with an adjusted p-value below 0.05."""
    names = sorted(set(before.resolved) & set(after.resolved))
    found: list[tuple[Comparison, Counter[str]]] = []
    for name in names:
        was, now = before.resolved[name], after.resolved[name]
        shared, left_out = _paired(before, after, was, now)
        found.append(
            (compare(name, [now[t] for t in shared], name, [was[t] for t in shared]), left_out)
        )
    tested = iter(adjusted([one for one, _ in found if one.total]))  # a test needs tasks
    family = [next(tested) if one.total else one for one, _ in found]
    limit = (threshold or 0.0) / 100
    changes = [
        _change(one, left_out, regressed=one.difference < -limit and one.p < LEVEL)
        for one, (_, left_out) in zip(family, found, strict=True)
    ]
    return BoutChange(
        before=before.source,
        after=after.source,
        threshold=threshold,
        contestants=changes,
        only_before=sorted(set(before.resolved) - set(after.resolved)),
        only_after=sorted(set(after.resolved) - set(before.resolved)),
        regressed=[change.contestant for change in changes if change.regressed],
    )


def _paired(
    before: Side, after: Side, was: dict[str, bool], now: dict[str, bool]
) -> tuple[list[str], Counter[str]]:
    """The task ids paired for one contestant, and the others by why they are not."""
    shared: list[str] = []
    left_out: Counter[str] = Counter()
    for task in sorted(set(before.truth) | set(after.truth)):
        if task not in after.truth:
            left_out[NOT_IN_AFTER] += 1
        elif task not in before.truth:
            left_out[NOT_IN_BEFORE] += 1
        elif before.truth[task] != after.truth[task]:
            left_out[TRUTH_CHANGED] += 1
        elif task not in was:
            left_out[UNCOUNTED_BEFORE] += 1
        elif task not in now:
            left_out[UNCOUNTED_AFTER] += 1
        else:
            shared.append(task)
    return shared, left_out


def _change(one: Comparison, left_out: Counter[str], *, regressed: bool) -> ContestantChange:
    """``one`` (``a``: the second bout, ``b``: the first) as a contestant's change."""
    return ContestantChange(
        contestant=one.a,
        tasks=one.total,
        left_out=dict(sorted(left_out.items())),
        before=interval("before", wilson(one.both + one.only_b, one.total)),
        after=interval("after", wilson(one.both + one.only_a, one.total)),
        both=one.both,
        only_before=one.only_b,
        only_after=one.only_a,
        difference=round(one.difference, 4),
        low=round(one.low, 4),
        high=round(one.high, 4),
        level=round(one.level, 6),
        p_value=round(one.p_value, 6),
        p_adjusted=round(one.p, 6),
        tasks_needed=one.needed,
        regressed=regressed,
        sentence=_sentence(one, regressed),
    )


def _sentence(one: Comparison, regressed: bool) -> str:
    """What the change says, in words that follow from the numbers."""
    name = one.a
    if not one.total:
        return f"{name}: no task was scored in both with the same ground truth."
    split = (
        f"{name} resolved {one.only_b} of {one.total} paired tasks only before and "
        f"{one.only_a} only after, {one.interval_text()}, {one.p_text()}"
    )
    if regressed:
        return f"{split}: it regressed."
    if one.decided:
        word = "improved" if one.difference > 0 else "dropped, within the threshold"
        return f"{split}: it {word}."
    return f"{split}: no change the data can tell apart."
