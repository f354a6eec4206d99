"""The report's statistics against values computed independently here, and a test per
wording branch of its sentences."""

from __future__ import annotations

import math

import pytest

from bugbout.core.report.statistics import (
    compare,
    headline,
    mcnemar_exact,
    paired_bootstrap,
    tasks_needed,
    wilson,
)


def _wilson_by_solving(successes: int, total: int, z: float = 1.959964) -> tuple[float, float]:
    """The interval's ends as the roots of (p - p̂)² = z² p (1 - p) / n, by bisection."""
    observed = successes / total

    def gap(p: float) -> float:
        return (p - observed) ** 2 - z * z * p * (1 - p) / total

    def root(lo: float, hi: float) -> float:
        for _ in range(200):
            mid = (lo + hi) / 2
            if (gap(lo) > 0) == (gap(mid) > 0):
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    return root(0.0, observed), root(observed, 1.0)


@pytest.mark.parametrize(("successes", "total"), [(14, 20), (1, 12), (39, 40), (7, 9)])
def test_wilson_interval_matches_the_quadratic_it_solves(successes: int, total: int) -> None:
    rate = wilson(successes, total)
    low, high = _wilson_by_solving(successes, total)
    assert rate.low == pytest.approx(low, abs=1e-9)
    assert rate.high == pytest.approx(high, abs=1e-9)


def test_wilson_at_the_edges_stays_in_range() -> None:
    assert wilson(0, 10).low == 0.0
    assert wilson(10, 10).high == 1.0
    assert wilson(14, 20).text() == "14/20 (70%, 95% CI 48-85%)"


@pytest.mark.parametrize(("only_a", "only_b"), [(4, 1), (0, 6), (7, 7), (10, 2), (0, 0)])
def test_mcnemar_is_the_two_sided_binomial_test_of_the_discordant_tasks(
    only_a: int, only_b: int
) -> None:
    n = only_a + only_b
    # By hand: the probability of every split at least as uneven as the one seen.
    observed = abs(only_a - only_b)
    expected = sum(math.comb(n, k) for k in range(n + 1) if abs(2 * k - n) >= observed) / 2**n
    assert mcnemar_exact(only_a, only_b) == pytest.approx(min(1.0, expected))
    assert mcnemar_exact(4, 1) == pytest.approx(12 / 32)  # the p = 0.38


def test_tasks_needed_by_the_textbook_formula() -> None:
    # 20 tasks, 4 + 1 discordant: p_d = 0.25, d = 0.15;
    # n = (1.96 * 0.5 + 0.8416 * sqrt(0.25 - 0.0225))^2 / 0.0225 = 84.8
    assert tasks_needed(4, 1, 20) == 85
    assert tasks_needed(3, 3, 20) is None


def test_tasks_needed_is_never_fewer_than_the_exact_test_needs() -> None:
    """3 tasks, all won by one side: the formula says 4, but the exact test calls a 4-0
    split p = 2/16 and a 5-0 split 2/32; only 6-0 (2/64 = 0.031) is below 5%."""
    assert tasks_needed(3, 0, 3) == 6
    assert tasks_needed(0, 2, 2) == 6


def test_paired_bootstrap_known_cases() -> None:
    same = [True, False, True, True]
    assert paired_bootstrap(same, same) == (0.0, 0.0, 0.0)
    assert paired_bootstrap([True] * 5, [False] * 5) == (1.0, 1.0, 1.0)
    a = [True] * 8 + [False] * 2 + [True] * 10 + [False] * 20
    b = [False] * 8 + [True] * 2 + [True] * 10 + [False] * 20
    difference, low, high = paired_bootstrap(a, b, seed=7)
    assert difference == pytest.approx(0.15)
    assert (difference, low, high) == paired_bootstrap(a, b, seed=7), "fixed seed, same result"
    # close to the normal approximation of the paired difference's interval
    d = [int(x) - int(y) for x, y in zip(a, b, strict=True)]
    mean = sum(d) / len(d)
    se = math.sqrt(sum((x - mean) ** 2 for x in d) / (len(d) - 1) / len(d))
    assert low == pytest.approx(mean - 1.96 * se, abs=0.03)
    assert high == pytest.approx(mean + 1.96 * se, abs=0.03)
    with pytest.raises(ValueError, match="one outcome of each per task"):
        paired_bootstrap([True], [True, False])


def _outcomes(only_a: int, only_b: int, both: int, neither: int) -> tuple[list[bool], list[bool]]:
    a = [True] * only_a + [False] * only_b + [True] * both + [False] * neither
    b = [False] * only_a + [True] * only_b + [True] * both + [False] * neither
    return a, b


def test_sentence_when_the_data_cannot_tell_them_apart() -> None:
    a, b = _outcomes(4, 1, 9, 6)
    assert compare("codex-high", a, "sonnet", b).sentence() == (
        "codex-high resolved 4 bugs that sonnet did not, and sonnet 1 that codex-high did "
        "not: not enough evidence to say either is better (p = 0.38); about 65 more bugs "
        "like these would be needed to tell a difference of this size."
    )


def test_sentence_when_one_is_better() -> None:
    a, b = _outcomes(1, 11, 5, 3)
    comparison = compare("codex", a, "sonnet", b)
    assert comparison.decided
    assert comparison.sentence() == (
        "codex resolved 1 bug that sonnet did not, and sonnet 11 that codex did not: "
        "sonnet is better (p = 0.0063)."
    )


def test_sentence_when_they_split_evenly_or_agree() -> None:
    a, b = _outcomes(3, 3, 2, 2)
    assert compare("x", a, "y", b).sentence() == (
        "x resolved 3 bugs that y did not, and y 3 that x did not: no difference on these "
        "bugs (p = 1)."
    )
    a, b = _outcomes(0, 0, 4, 6)
    assert compare("x", a, "y", b).sentence() == "x and y resolved the same bugs."


def test_headline_follows_the_numbers() -> None:
    a, b = _outcomes(4, 1, 10, 5)
    rates = {"codex": wilson(14, 20), "sonnet": wilson(11, 20)}
    assert headline(rates, compare("codex", a, "sonnet", b)) == (
        "codex resolved the most bugs: 14/20 (70%, 95% CI 48-85%), 3 bugs more than "
        "sonnet; not enough evidence that it is better (p = 0.38)."
    )
    a, b = _outcomes(12, 0, 2, 6)
    rates = {"codex": wilson(14, 20), "sonnet": wilson(2, 20)}
    assert headline(rates, compare("codex", a, "sonnet", b)).endswith(
        "12 bugs more than sonnet; a real difference (p = 0.00049)."
    )
    assert headline(
        {"a": wilson(5, 10), "b": wilson(5, 10)}, compare("a", [True], "b", [True])
    ) == ("a and b tie at 5/10 (50%, 95% CI 24-76%).")
    assert headline({}, None) == "No agent raced."
