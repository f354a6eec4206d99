"""How sure a bout's numbers are: intervals for resolve rates, paired comparisons of two
agents over the same tasks, and the sentences that say what the numbers mean.

- A resolve rate gets a Wilson score interval (95%; Wilson 1927): unlike the normal
  approximation it stays inside [0, 1] and behaves on the 10 to 50 tasks a team has.
- Two agents on the same tasks are compared on the tasks where they differ (the
  *discordant* tasks): an exact McNemar test, the two-sided binomial test of those
  tasks at 1/2 (McNemar 1947; Agresti, *Categorical Data Analysis*, 3rd ed., §11.1).
- The difference of their rates gets the exact conditional interval the test inverts:
  a Clopper-Pearson interval (Clopper and Pearson 1934) for the share of the discordant
  tasks the first won, θ, mapped to the difference ``(2θ - 1) · discordant / tasks``.
  It excludes 0 exactly when the test's p-value is below the level, so the two never
  disagree (a bootstrap interval could: a 5-0 split, p = 0.0625, got an interval
  without 0). It is conditional on the number of discordant tasks: with none, it is 0.
- Several comparisons at once are corrected with Holm's step-down method (Holm 1979);
  each interval is then drawn at the level that matches its adjusted p-value.
- How many more tasks would tell a difference of the observed size apart: the usual
  sample size for McNemar's test at a 5% level and 80% power (Connor 1987).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

Z95 = 1.959964
"""The normal quantile of a two-sided 95% interval."""
Z_POWER = 0.841621
"""The normal quantile of 80% power."""
LEVEL = 0.05
"""The significance level the sentences use."""
EXACT_UP_TO = 1000
"""Up to this many tasks, :func:`tasks_needed` checks its estimate with the exact test."""
_BISECTIONS = 200


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


def clopper_pearson(successes: int, total: int, alpha: float = LEVEL) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a binomial proportion at level
    ``1 - alpha``: the proportions whose one-sided tails at ``successes`` exceed
    ``alpha / 2`` each."""
    if total <= 0:
        return 0.0, 1.0
    low = 0.0 if successes == 0 else _solve(lambda p: _tail_from(successes, total, p), alpha / 2)
    high = (
        1.0
        if successes == total
        else _solve(lambda p: _tail_from(successes + 1, total, p), 1 - alpha / 2)
    )
    return low, high


def paired_interval(
    only_a: int, only_b: int, total: int, alpha: float = LEVEL
) -> tuple[float, float, float]:
    """The difference of two rates over the same ``total`` tasks, ``(only_a - only_b) /
    total``, with its exact conditional interval at level ``1 - alpha``: the
    Clopper-Pearson interval of ``only_a / (only_a + only_b)`` mapped to the difference.
    It excludes 0 exactly when :func:`mcnemar_exact` is below ``alpha``."""
    if total <= 0:
        return 0.0, 0.0, 0.0
    discordant = only_a + only_b
    difference = (only_a - only_b) / total
    if discordant == 0:
        return difference, 0.0, 0.0
    low, high = clopper_pearson(only_a, discordant, alpha)
    scale = discordant / total
    return difference, (2 * low - 1) * scale, (2 * high - 1) * scale


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given: the smallest p times the
    number of tests, the next times one fewer, ..., never below the one before, at most 1."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [1.0] * len(p_values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def _tail_from(successes: int, total: int, p: float) -> float:
    """P(X >= ``successes``) for X ~ Binomial(``total``, ``p``)."""
    if successes <= 0:
        return 1.0
    if p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    logs = (
        math.lgamma(total + 1)
        - math.lgamma(k + 1)
        - math.lgamma(total - k + 1)
        + k * math.log(p)
        + (total - k) * math.log1p(-p)
        for k in range(successes, total + 1)
    )
    return min(1.0, sum(math.exp(value) for value in logs))


def _solve(increasing: Callable[[float], float], target: float) -> float:
    """The ``p`` in [0, 1] where the increasing ``increasing(p)`` reaches ``target``."""
    low, high = 0.0, 1.0
    for _ in range(_BISECTIONS):
        middle = (low + high) / 2
        if increasing(middle) < target:
            low = middle
        else:
            high = middle
        if high - low < 1e-15:
            break
    return (low + high) / 2


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
    """Two agents (or a judge's picks and an agent) over the same tasks."""

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
    both: int = 0
    """Tasks both resolved."""
    p_adjusted: float | None = None
    """Holm-adjusted over ``comparisons`` tests; ``None``: this test alone."""
    comparisons: int = 1
    level: float = 1 - LEVEL
    """The confidence level of ``low`` to ``high``: 95%, or the one matching
    ``p_adjusted``."""

    @property
    def p(self) -> float:
        """The p-value the verdict uses: adjusted when there are several tests."""
        return self.p_value if self.p_adjusted is None else self.p_adjusted

    @property
    def decided(self) -> bool:
        """Whether the data tell the two apart at the 5% level (after Holm's correction)."""
        return self.p < LEVEL

    @property
    def winner(self) -> str | None:
        """Whichever resolved more of the tasks where they differ (``None``: even)."""
        if self.only_a == self.only_b:
            return None
        return self.a if self.only_a > self.only_b else self.b

    def flipped(self) -> Comparison:
        """The same comparison with ``b`` first."""
        return replace(
            self,
            a=self.b,
            b=self.a,
            only_a=self.only_b,
            only_b=self.only_a,
            difference=-self.difference,
            low=-self.high,
            high=-self.low,
        )

    def p_text(self) -> str:
        """``p = 0.012`` or ``p = 0.012, Holm-adjusted 0.036 over 3 comparisons``."""
        if self.p_adjusted is None or self.comparisons == 1:
            return f"exact McNemar p = {self.p_value:.2g}"
        return (
            f"exact McNemar p = {self.p_value:.2g}, Holm-adjusted {self.p_adjusted:.2g} over "
            f"{self.comparisons} comparisons"
        )

    def interval_text(self) -> str:
        """``+25% (95% CI -4% to +54%)``."""
        level = f"{self.level * 100:.3g}%"
        return (
            f"{_signed(self.difference)} ({level} CI {_signed(self.low)} to {_signed(self.high)})"
        )

    def sentence(self) -> str:
        """What the comparison says, in words that follow from the numbers."""
        if self.only_a == self.only_b == 0:
            return f"{self.a} and {self.b} resolved the same bugs."
        split = (
            f"{self.a} resolved {_bugs(self.only_a)} that {self.b} did not, and {self.b} "
            f"{self.only_b} that {self.a} did not"
        )
        if self.decided:
            return f"{split}: {self.winner} is better ({self.p_text()})."
        if self.winner is None:
            return f"{split}: no difference on these bugs ({self.p_text()})."
        more = (self.needed or 0) - self.total
        needed = (
            f"; about {more} more {'bug' if more == 1 else 'bugs'} like these would be "
            "needed to tell a difference of this size (mine more: a higher `miner.limit`, "
            "injected bugs with `miner=mutants`, more repositories)"
            if more > 0
            else ""
        )
        return (
            f"{split}: not distinguishable, not enough evidence to say either is better "
            f"({self.p_text()}){needed}."
        )


def compare(a: str, resolved_a: Sequence[bool], b: str, resolved_b: Sequence[bool]) -> Comparison:
    """Compare two agents' per-task outcomes (the same tasks, in the same order)."""
    only_a = sum(1 for x, y in zip(resolved_a, resolved_b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(resolved_a, resolved_b, strict=True) if y and not x)
    both = sum(1 for x, y in zip(resolved_a, resolved_b, strict=True) if x and y)
    total = len(resolved_a)
    difference, low, high = paired_interval(only_a, only_b, total)
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
        both=both,
    )


def adjusted(comparisons: Sequence[Comparison]) -> list[Comparison]:
    """``comparisons`` as one family of tests: each with its Holm-adjusted p-value and its
    interval at level ``1 - 0.05 · p / p_adjusted``, which excludes 0 exactly when the
    adjusted p-value is below 0.05 (the 95% interval when a single test)."""
    if len(comparisons) < 2:  # one test needs no correction
        return list(comparisons)
    found = []
    for one, p_adjusted in zip(comparisons, holm([c.p_value for c in comparisons]), strict=True):
        alpha = LEVEL * one.p_value / p_adjusted if p_adjusted > 0 else LEVEL
        _, low, high = paired_interval(one.only_a, one.only_b, one.total, alpha)
        found.append(
            replace(
                one,
                low=low,
                high=high,
                p_adjusted=p_adjusted,
                comparisons=len(comparisons),
                level=1 - alpha,
            )
        )
    return found


def _bugs(count: int) -> str:
    return f"{count} bug" if count == 1 else f"{count} bugs"


def _signed(value: float) -> str:
    return f"{round(value * 100):+d}%"


def _percent(value: float, *, sign: bool = True) -> str:
    return f"{round(value * 100)}%" if sign else f"{round(value * 100)}"
