"""Statistics over tasks that each hold several samples (``run.repeats``).

- A contestant's attempts on one task are not independent samples of its skill: they
  share the task. Its rate is the mean of its per-task rates, every task weighing the
  same, and its interval is clustered by task: the standard error of the per-task means
  (the cluster-robust standard error with tasks as clusters; Cameron and Miller 2015,
  Miller 2024 "Adding Error Bars to Evals", §2.2), with Student's t on ``tasks - 1``
  degrees of freedom, which keeps the interval honest on the few tasks a bout has.
- pass@k, the chance that at least one of k attempts resolves a task, is estimated per
  task by the unbiased ``1 - C(n - c, k) / C(n, k)`` (Chen et al. 2021, "Evaluating
  Large Language Models Trained on Code", §2.1), and pass^k, the chance that all k do,
  by ``C(c, k) / C(n, k)`` (Yao et al. 2024, "τ-bench"), from the ``c`` of ``n``
  attempts that resolved it; both are averaged over the tasks with ``n >= k``, with the
  same clustered interval.
- Two contestants are compared on the tasks both attempted by a paired t-test on their
  per-task rate differences (Student 1908); its interval is the t interval of the mean
  difference, so the two agree: the interval excludes 0 exactly when p is below its
  level.
- The smallest difference a bout as run detects with 80% power at 5% is
  ``(t(1 - alpha/2) + t(power)) · sd / sqrt(tasks)``, ``sd`` the standard deviation of the
  per-task differences observed (the normal-approximation sample size of a paired
  comparison; Chow, Shao and Wang, *Sample Size Calculations in Clinical Research*,
  3rd ed., §3.1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from bugbout.core.report.statistics import LEVEL

POWER = 0.8
"""The power the detectable difference is computed for."""
_ITERATIONS = 300
_TINY = 1e-300


@dataclass(frozen=True)
class Mean:
    """The mean of per-task values with its clustered interval (``None``: fewer than two
    tasks, or no spread to measure)."""

    value: float | None
    tasks: int
    low: float | None = None
    high: float | None = None
    se: float | None = None


def pass_at(n: int, c: int, k: int) -> float:
    """Chen et al.'s unbiased pass@k on one task: ``c`` of ``n`` attempts resolved it."""
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_all(n: int, c: int, k: int) -> float:
    """pass^k on one task: the chance that ``k`` of its ``n`` attempts, drawn without
    replacement, all resolve it."""
    return math.comb(c, k) / math.comb(n, k)


def clustered_mean(
    values: Sequence[float], *, level: float = 1 - LEVEL, bounds: tuple[float, float] = (0.0, 1.0)
) -> Mean:
    """The mean of one value per task, with its t interval at ``level`` (kept within
    ``bounds``)."""
    tasks = len(values)
    if not tasks:
        return Mean(None, 0)
    mean = sum(values) / tasks
    if tasks < 2:
        return Mean(mean, tasks)
    se = math.sqrt(sum((v - mean) ** 2 for v in values) / (tasks - 1) / tasks)
    half = t_quantile(1 - (1 - level) / 2, tasks - 1) * se
    low, high = max(bounds[0], mean - half), min(bounds[1], mean + half)
    return Mean(mean, tasks, low, high, se)


@dataclass(frozen=True)
class PairedTest:
    """A paired t-test of per-task differences: their mean, its interval at ``level``,
    the two-sided p-value (``None``: fewer than two tasks, or every difference the same
    nonzero value, which no spread can test) and the difference detectable at 80%
    power (``None`` without a spread to size it by)."""

    difference: float | None
    tasks: int
    p_value: float | None
    low: float | None
    high: float | None
    detectable: float | None


def paired_t(differences: Sequence[float], *, level: float = 1 - LEVEL) -> PairedTest:
    """The paired t-test of ``differences`` (one per task) against 0."""
    tasks = len(differences)
    mean = clustered_mean(differences, level=level, bounds=(-1.0, 1.0))
    if mean.se is None or mean.value is None:
        return PairedTest(mean.value, tasks, None, None, None, None)
    if mean.se == 0:  # no spread: nothing to size a difference against
        p = 1.0 if mean.value == 0 else None
        return PairedTest(mean.value, tasks, p, mean.value, mean.value, None)
    quantiles = t_quantile(1 - LEVEL / 2, tasks - 1) + t_quantile(POWER, tasks - 1)
    detectable = quantiles * mean.se
    p = t_two_sided(mean.value / mean.se, tasks - 1)
    return PairedTest(mean.value, tasks, p, mean.low, mean.high, detectable)


def t_two_sided(t: float, df: int) -> float:
    """P(|T| >= |t|) for Student's T with ``df`` degrees of freedom."""
    return incomplete_beta(df / 2, 0.5, df / (df + t * t))


def t_quantile(probability: float, df: int) -> float:
    """The ``probability`` quantile of Student's t with ``df`` degrees of freedom, for
    ``probability`` >= 1/2 (by bisection on :func:`t_two_sided`)."""
    target = 2 * (1 - probability)
    if target >= 1:
        return 0.0
    low, high = 0.0, 1.0
    while t_two_sided(high, df) > target:
        low, high = high, high * 2
    for _ in range(_ITERATIONS):
        middle = (low + high) / 2
        if high - low < 1e-12:
            break
        low, high = (middle, high) if t_two_sided(middle, df) > target else (low, middle)
    return (low + high) / 2


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), by its continued fraction
    (Lentz's method; Press et al., *Numerical Recipes*, 3rd ed., §6.4)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x > (a + 1) / (a + b + 2):  # the fraction converges fast on this side only
        return 1.0 - front * _fraction(b, a, 1 - x) / b
    return front * _fraction(a, b, x) / a


def _fraction(a: float, b: float, x: float) -> float:
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    result = d
    for m in range(1, _ITERATIONS):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            result *= c * d
        if abs(c * d - 1) < 1e-15:
            break
    return result
