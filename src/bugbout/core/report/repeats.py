"""Repeats in the report (``run.repeats`` > 1): per-task success rates, pass@k and pass^k,
intervals clustered by task, paired tests between contestants and the difference the
bout as run can detect.

A contestant's repeat r on a task is an independent attempt with its own retry rounds;
its sample is its last round's patch, resolved or not against the hidden tests. An
attempt the bout does not count (a quota, an infrastructure error) is no sample; a task
with no sample of a contestant is left out of its figures. The methods are those of
:mod:`bugbout.core.report.clustered`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

from pydantic import Field

from bugbout.core.report.clustered import Mean, clustered_mean, paired_t, pass_all, pass_at
from bugbout.core.report.statistics import LEVEL, holm
from bugbout.core.store.records import Record

METHOD = (
    "per-task rates averaged over tasks, 95% t interval clustered by task (standard error "
    "of the per-task means); pass@k: Chen et al.'s unbiased estimator, pass^k: C(c,k)/C(n,k), "
    "each averaged over the tasks with at least k samples; pairs: paired t-test on per-task "
    "rate differences, Holm-adjusted, its interval at the matching level; detectable: the "
    "difference the paired test finds with 80% power at 5%, from the spread observed"
)


class TaskRate(Record):
    """One contestant's samples on one task."""

    task: str
    resolved: int
    samples: int


class AtK(Record):
    """pass@k or pass^k for one k, averaged over the tasks with at least k samples."""

    k: int
    tasks: int = 0
    value: float | None = None
    low: float | None = None
    high: float | None = None


class AgentRepeats(Record):
    """One contestant's repeats."""

    contestant: str
    tasks: int = 0
    samples: int = 0
    resolved: int = 0
    rate: float | None = None
    """The mean of its per-task success rates."""
    low: float | None = None
    high: float | None = None
    """Its 95% interval, clustered by task."""
    pass_at: list[AtK] = Field(default_factory=list)
    """pass@k for k = 1..the bout's repeats."""
    pass_all: list[AtK] = Field(default_factory=list)
    """pass^k for k = 1..the bout's repeats."""
    per_task: list[TaskRate] = Field(default_factory=list)


class PairRepeats(Record):
    """Two contestants' per-task rates, paired over the tasks both have samples on."""

    first: str
    second: str
    tasks: int = 0
    difference: float | None = None
    """The mean of first's per-task rate minus second's."""
    low: float | None = None
    high: float | None = None
    level: float = 1 - LEVEL
    """The confidence of the interval: 95%, or more when corrected for several pairs."""
    p_value: float | None = None
    p_adjusted: float | None = None
    """Holm-adjusted across the pairs."""
    detectable: float | None = None
    """The difference this paired test detects with 80% power at 5% on these tasks."""
    sentence: str = ""


class Repeats(Record):
    """Every contestant's repeats, and each pair compared; ``k`` is 1 when the bout
    had no repeats (the rest is then empty)."""

    k: int = 1
    method: str = METHOD
    agents: list[AgentRepeats] = Field(default_factory=list)
    pairs: list[PairRepeats] = Field(default_factory=list)


def repeats_report(
    contestants: Sequence[str], samples: Mapping[tuple[str, str], Sequence[bool]], k: int
) -> Repeats:
    """The repeats of ``contestants`` from each (task, contestant)'s samples (resolved or
    not); ``k``: the bout's repeats."""
    if k < 2:
        return Repeats()
    rates: dict[str, dict[str, TaskRate]] = {}
    for (task, name), outcomes in sorted(samples.items()):
        if outcomes and name in contestants:
            rates.setdefault(name, {})[task] = TaskRate(
                task=task, resolved=sum(outcomes), samples=len(outcomes)
            )
    agents = [_agent(name, rates.get(name, {}), k) for name in contestants]
    return Repeats(k=k, agents=agents, pairs=_pairs(contestants, rates))


def _agent(name: str, per_task: dict[str, TaskRate], k: int) -> AgentRepeats:
    counted = list(per_task.values())
    mean = clustered_mean([r.resolved / r.samples for r in counted])
    return AgentRepeats(
        contestant=name,
        tasks=len(counted),
        samples=sum(r.samples for r in counted),
        resolved=sum(r.resolved for r in counted),
        rate=mean.value,
        low=mean.low,
        high=mean.high,
        pass_at=[
            _at(j, [pass_at(r.samples, r.resolved, j) for r in counted if r.samples >= j])
            for j in range(1, k + 1)
        ],
        pass_all=[
            _at(
                j, [pass_all(r.samples, r.resolved, j) for r in per_task.values() if r.samples >= j]
            )
            for j in range(1, k + 1)
        ],
        per_task=counted,
    )


def _at(k: int, values: list[float]) -> AtK:
    mean: Mean = clustered_mean(values)
    return AtK(k=k, tasks=mean.tasks, value=mean.value, low=mean.low, high=mean.high)


def _pairs(contestants: Sequence[str], rates: dict[str, dict[str, TaskRate]]) -> list[PairRepeats]:
    """Every pair of contestants, Holm-corrected as one family of tests."""
    found: list[tuple[str, str, list[float]]] = []
    for first, second in combinations(contestants, 2):
        mine, theirs = rates.get(first, {}), rates.get(second, {})
        shared = sorted(set(mine) & set(theirs))
        differences = [
            mine[t].resolved / mine[t].samples - theirs[t].resolved / theirs[t].samples
            for t in shared
        ]
        found.append((first, second, differences))
    plain = [paired_t(differences) for _, _, differences in found]
    testable = [i for i, test in enumerate(plain) if test.p_value is not None]
    adjusted = dict(zip(testable, holm([plain[i].p_value or 0.0 for i in testable]), strict=True))
    pairs = []
    for i, (first, second, differences) in enumerate(found):
        test, p_adjusted, level = plain[i], adjusted.get(i), 1 - LEVEL
        if test.p_value and p_adjusted:  # one pair: p_adjusted is p, the level 95%
            level = 1 - LEVEL * test.p_value / p_adjusted
            test = paired_t(differences, level=level)
        pair = PairRepeats(
            first=first,
            second=second,
            tasks=test.tasks,
            difference=test.difference,
            low=test.low,
            high=test.high,
            level=level,
            p_value=test.p_value,
            p_adjusted=p_adjusted,
            detectable=test.detectable,
        )
        pairs.append(pair.model_copy(update={"sentence": _sentence(pair)}))
    return pairs


def _sentence(pair: PairRepeats) -> str:
    """What the comparison means, in words."""
    if pair.difference is None or pair.tasks < 2:
        return "too few tasks both attempted to compare them"
    if pair.p_adjusted is None:
        return "every task differs by the same amount: no spread to test it against"
    points = round(abs(pair.difference) * 100)
    if pair.p_adjusted < LEVEL:
        ahead = pair.first if pair.difference > 0 else pair.second
        return f"{ahead} resolves more: {points} points ahead per task (p={pair.p_adjusted:.3g})"
    detect = (
        f"; this bout detects about {round(pair.detectable * 100)} points at 80% power"
        if pair.detectable
        else ""
    )
    return f"no evidence of a difference (p={pair.p_adjusted:.3g}){detect}"
