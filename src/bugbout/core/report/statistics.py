"""How sure a bout's numbers are: intervals for resolve rates, paired comparisons of two
agents over the same tasks, and the sentences that say what the numbers mean.

- A resolve rate gets a Wilson score interval (95%): unlike the normal approximation it
  stays inside [0, 1] and behaves on the 10 to 50 tasks a team has.
- Two agents on the same tasks are compared on the tasks where they differ (the
  *discordant* tasks): an exact McNemar test (a two-sided binomial test of those tasks
  at 1/2), and a paired bootstrap over tasks for the interval of the difference.
- How many more tasks would tell a difference of the observed size apart: the usual
  sample size for McNemar's test at a 5% level and 80% power.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

Z95 = 1.959964
"""The normal quantile of a two-sided 95% interval."""
Z_POWER = 0.841621
"""The normal quantile of 80% power."""
LEVEL = 0.05
EXACT_UP_TO = 1000
"""Up to this many tasks, :func:`tasks_needed` checks its estimate with the exact test."""
"""The significance level the sentences use."""
RESAMPLES = 10_000
"""Bootstrap resamples of the paired difference."""


@dataclass(frozen=True)
class Rate:
    """``successes`` of ``total``, with its 95% Wilson interval."""

    successes: int
    total: int
    low: float
    high: float

    @property
    def value(self) -> float:
        return self.successes / self.total if self.total else 0.0

    def text(self) -> str:
        """``14/20 (70%, 95% CI 48-85%)``."""
        if not self.total:
            return "no tasks"
        return (
            f"{self.successes}/{self.total} ({_percent(self.value)}, 95% CI "
            f"{_percent(self.low, sign=False)}-{_percent(self.high)})"
        )


def wilson(successes: int, total: int, z: float = Z95) -> Rate:
    """The rate ``successes/total`` with its Wilson score interval."""
    if total <= 0:
        return Rate(successes, total, 0.0, 1.0)
    p = successes / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == total else min(1.0, centre + half)
    return Rate(successes, total, low, high)


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """The two-sided exact McNemar p-value: of the tasks where the two differ, how
    unlikely a split at least this uneven is if either were as likely to win each."""
    discordant = only_a + only_b
    if discordant == 0:
        return 1.0
    tail = sum(math.comb(discordant, i) for i in range(min(only_a, only_b) + 1))
    return min(1.0, 2 * tail / float(2**discordant))


def paired_bootstrap(
    a: Sequence[bool], b: Sequence[bool], *, resamples: int = RESAMPLES, seed: int = 0
) -> tuple[float, float, float]:
    """The difference of rates ``a - b`` over the same tasks and its 95% percentile
    interval, resampling tasks (pairs) with a fixed ``seed``."""
    if len(a) != len(b):
        raise ValueError("a paired comparison needs one outcome of each per task")
    n = len(a)
    if n == 0:
        return 0.0, 0.0, 0.0
    differences = [int(x) - int(y) for x, y in zip(a, b, strict=True)]
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(differences, k=n)) / n for _ in range(resamples))
    low = means[int(0.025 * (resamples - 1))]
    high = means[math.ceil(0.975 * (resamples - 1))]
    return sum(differences) / n, low, high


def tasks_needed(only_a: int, only_b: int, total: int) -> int | None:
    """How many tasks like these a McNemar test needs to tell a difference of the
    observed size at 5% with 80% power (the normal approximation's formula), and never
    fewer than the exact test itself needs to call the observed split significant;
    ``None`` when there is no difference."""
    if total <= 0 or only_a == only_b:
        return None
    discordant = (only_a + only_b) / total
    difference = abs(only_a - only_b) / total
    spread = math.sqrt(max(discordant - difference * difference, 0.0))
    needed = math.ceil((Z95 * math.sqrt(discordant) + Z_POWER * spread) ** 2 / difference**2)
    if needed > EXACT_UP_TO:  # many tasks: the approximation holds
        return needed
    exact = max(total, 1)
    while mcnemar_exact(round(exact * only_a / total), round(exact * only_b / total)) >= LEVEL:
        exact += 1  # the approximation undercounts small, lopsided splits
    return max(needed, exact)


@dataclass(frozen=True)
class Comparison:
    """Two agents (or the judge and an agent) over the same tasks."""

    a: str
    b: str
    total: int
    only_a: int
    only_b: int
    difference: float
    low: float
    high: float
    p_value: float
    needed: int | None

    @property
    def decided(self) -> bool:
        """Whether the data tell the two apart at the 5% level."""
        return self.p_value < LEVEL

    def sentence(self) -> str:
        """What the comparison says, in words that follow from the numbers."""
        if self.only_a == self.only_b == 0:
            return f"{self.a} and {self.b} resolved the same bugs."
        split = (
            f"{self.a} resolved {_bugs(self.only_a)} that {self.b} did not, and {self.b} "
            f"{self.only_b} that {self.a} did not"
        )
        p = f"p = {self.p_value:.2g}"
        if self.decided:
            better = self.a if self.only_a > self.only_b else self.b
            return f"{split}: {better} is better ({p})."
        if self.only_a == self.only_b:
            return f"{split}: no difference on these bugs ({p})."
        more = (self.needed or 0) - self.total
        needed = (
            f"; about {more} more {'bug' if more == 1 else 'bugs'} like these would be "
            "needed to tell a difference of this size"
            if more > 0
            else ""
        )
        return f"{split}: not enough evidence to say either is better ({p}){needed}."


def compare(a: str, resolved_a: Sequence[bool], b: str, resolved_b: Sequence[bool]) -> Comparison:
    """Compare two agents' per-task outcomes (the same tasks, in the same order)."""
    only_a = sum(1 for x, y in zip(resolved_a, resolved_b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(resolved_a, resolved_b, strict=True) if y and not x)
    difference, low, high = paired_bootstrap(resolved_a, resolved_b)
    total = len(resolved_a)
    return Comparison(
        a=a,
        b=b,
        total=total,
        only_a=only_a,
        only_b=only_b,
        difference=difference,
        low=low,
        high=high,
        p_value=mcnemar_exact(only_a, only_b),
        needed=tasks_needed(only_a, only_b, total),
    )


def headline(rates: dict[str, Rate], comparison: Comparison | None) -> str:
    """The report's first sentence: who resolved most, by how much, and whether that is
    a real difference (``comparison``: the leader against the runner-up)."""
    if not rates:
        return "No agent raced."
    ranked = sorted(rates.items(), key=lambda item: (-item[1].successes, item[0]))
    leader, rate = ranked[0]
    opening = f"{leader} resolved the most bugs: {rate.text()}"
    if comparison is None or len(ranked) == 1:
        return opening + "."
    runner, second = ranked[1]
    gap = rate.successes - second.successes
    if gap == 0:
        return f"{leader} and {runner} tie at {rate.text()}."
    verdict = "a real difference" if comparison.decided else "not enough evidence that it is better"
    return f"{opening}, {_bugs(gap)} more than {runner}; {verdict} (p = {comparison.p_value:.2g})."


def _bugs(count: int) -> str:
    return f"{count} bug" if count == 1 else f"{count} bugs"


def _percent(value: float, *, sign: bool = True) -> str:
    return f"{round(value * 100)}%" if sign else f"{round(value * 100)}"
