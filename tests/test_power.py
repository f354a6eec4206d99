"""The exact McNemar power and the smallest detectable difference, against a brute force
over every outcome of a bout with SciPy's exact binomial test."""

from __future__ import annotations

import math
from functools import cache

import pytest

from bugbout.core.report.power import detectable_difference, mcnemar_power

stats = pytest.importorskip("scipy.stats")


@cache
def pvalue(b: int, d: int) -> float:
    return float(stats.binomtest(b, d, 0.5).pvalue)


def brute_power(tasks: int, better: float, worse: float, alpha: float = 0.05) -> float:
    """Every split of ``tasks`` into b tasks for the first, c for the second and the rest
    concordant, weighted by its multinomial probability, rejected or not by SciPy."""
    rest = 1 - better - worse
    total = 0.0
    for b in range(tasks + 1):
        for c in range(tasks - b + 1):
            if b + c == 0:
                continue
            weight = (
                math.factorial(tasks)
                / (math.factorial(b) * math.factorial(c) * math.factorial(tasks - b - c))
                * better**b
                * worse**c
                * rest ** (tasks - b - c)
            )
            if pvalue(b, b + c) <= alpha:
                total += weight
    return total


@pytest.mark.parametrize(
    ("tasks", "better", "worse"),
    [(12, 0.3, 0.05), (25, 0.2, 0.1), (30, 0.4, 0.4), (40, 0.25, 0.02), (18, 0.6, 0.1)],
)
def test_the_power_is_the_brute_forces(tasks: int, better: float, worse: float) -> None:
    assert mcnemar_power(tasks, better, worse) == pytest.approx(
        brute_power(tasks, better, worse), abs=1e-9
    )


@pytest.mark.parametrize("tasks", [20, 35])
def test_the_detectable_difference_is_the_smallest_with_80_percent_power(tasks: int) -> None:
    delta = detectable_difference(tasks)
    assert delta is not None

    def independent(d: float) -> tuple[float, float]:
        first, second = 0.5 + d / 2, 0.5 - d / 2  # resolve rates, outcomes independent
        return first * (1 - second), second * (1 - first)

    assert brute_power(tasks, *independent(delta)) >= 0.8
    assert brute_power(tasks, *independent(delta - 0.001)) < 0.8


def test_a_given_discordance_and_too_few_tasks() -> None:
    delta = detectable_difference(60, discordant=0.3)
    assert delta is not None and delta < (detectable_difference(60) or 1)
    assert brute_power(60, (0.3 + delta) / 2, (0.3 - delta) / 2) >= 0.8
    assert brute_power(60, (0.3 + delta - 0.001) / 2, (0.3 - delta + 0.001) / 2) < 0.8
    assert detectable_difference(3) is None  # 3 discordant tasks never reach p <= 5%
    assert mcnemar_power(0, 0.5, 0.1) == 0.0
