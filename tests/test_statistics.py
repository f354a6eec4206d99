"""The report's statistics against values computed independently here, and a test per
wording branch of its sentences."""

from __future__ import annotations

import math

import pytest

from bugbout.core.report.headline import headline
from bugbout.core.report.statistics import (
    Comparison,
    adjusted,
    clopper_pearson,
    compare,
    holm,
    mcnemar_exact,
    paired_interval,
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
    assert mcnemar_exact(4, 1) == pytest.approx(12 / 32)  # the issue's p = 0.38


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


def test_clopper_pearson_against_its_closed_forms_and_a_textbook_value() -> None:
    # x = n: the lower end solves p^n = alpha/2; x = 0: the upper end (1 - p)^n = alpha/2
    assert clopper_pearson(5, 5)[0] == pytest.approx(0.025 ** (1 / 5), abs=1e-12)
    assert clopper_pearson(0, 7)[1] == pytest.approx(1 - 0.025 ** (1 / 7), abs=1e-12)
    # 1 of 10: 0.0025 to 0.4450 (Clopper and Pearson's tables; Agresti and Coull 1998)
    low, high = clopper_pearson(1, 10)
    assert (round(low, 4), round(high, 4)) == (0.0025, 0.4450)


def test_the_paired_interval_agrees_with_the_exact_test_at_every_split() -> None:
    """The interval excludes 0 exactly when McNemar's p is below its level, for every
    split of up to 40 discordant tasks and several levels."""
    for discordant in range(1, 41):
        for only_a in range(discordant + 1):
            p = mcnemar_exact(only_a, discordant - only_a)
            for alpha in (0.05, 0.01, 0.0167, 0.2):
                _, low, high = paired_interval(only_a, discordant - only_a, discordant + 5, alpha)
                assert (low > 0 or high < 0) == (p < alpha), (only_a, discordant, alpha)


def test_the_issues_contradictions_are_gone() -> None:
    """A 0-2 split (p = 0.5) no longer gets "-100% (-100% to -100%)", and a 5-0 split
    (p = 0.0625) no longer an interval without 0."""
    difference, low, high = paired_interval(0, 2, 2)
    assert (difference, low) == (-1.0, -1.0)
    assert high == pytest.approx(2 * (1 - 0.025**0.5) - 1)  # +68%: 0 inside
    difference, low, high = paired_interval(5, 0, 5)
    assert difference == 1.0 and high == 1.0
    assert low == pytest.approx(2 * 0.025 ** (1 / 5) - 1) and low < 0
    # 3 of 6 discordant: Clopper-Pearson 0.1181 to 0.8819, scaled by 6/10
    assert paired_interval(3, 3, 10) == pytest.approx((0.0, -0.4583, 0.4583), abs=1e-4)
    assert paired_interval(0, 0, 4) == (0.0, 0.0, 0.0)


def test_holm_adjusts_step_down_and_keeps_the_order() -> None:
    # sorted 0.01, 0.02, 0.04 -> 0.03, max(0.03, 0.04), max(0.04, 0.04)
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []


def test_adjusted_intervals_agree_with_the_adjusted_p_values() -> None:
    """Three comparisons: each interval excludes 0 exactly when its Holm p is below 5%."""
    found = adjusted(
        [
            _pair("a", 9, 0, 1, 0),  # p = 0.0039
            _pair("c", 6, 0, 1, 0),  # p = 0.031: 0.0625 after Holm
            _pair("e", 3, 3, 1, 0),
        ]
    )
    assert [round(one.p, 4) for one in found] == [0.0117, 0.0625, 1.0]
    assert [one.decided for one in found] == [True, False, False]
    for one in found:
        assert (one.low > 0 or one.high < 0) == one.decided
        assert one.comparisons == 3
    assert found[1].level > 0.95
    assert "Holm-adjusted 0.062 over 3 comparisons" in found[1].sentence()
    assert "not distinguishable" in found[1].sentence()


def _outcomes(only_a: int, only_b: int, both: int, neither: int) -> tuple[list[bool], list[bool]]:
    a = [True] * only_a + [False] * only_b + [True] * both + [False] * neither
    b = [False] * only_a + [True] * only_b + [True] * both + [False] * neither
    return a, b


def _pair(name: str, only_a: int, only_b: int, both: int, neither: int) -> Comparison:
    a, b = _outcomes(only_a, only_b, both, neither)
    return compare(name, a, "b", b)


def test_sentence_when_the_data_cannot_tell_them_apart() -> None:
    a, b = _outcomes(4, 1, 9, 6)
    assert compare("codex-high", a, "sonnet", b).sentence() == (
        "codex-high resolved 4 bugs that sonnet did not, and sonnet 1 that codex-high did "
        "not: not distinguishable, not enough evidence to say either is better (exact "
        "McNemar p = 0.38); about 65 more bugs like these would be needed to tell a "
        "difference of this size (mine more: a higher `miner.limit`, injected bugs with "
        "`miner=mutants`, more repositories)."
    )


def test_sentence_when_one_is_better() -> None:
    a, b = _outcomes(1, 11, 5, 3)
    comparison = compare("codex", a, "sonnet", b)
    assert comparison.decided
    assert comparison.sentence() == (
        "codex resolved 1 bug that sonnet did not, and sonnet 11 that codex did not: "
        "sonnet is better (exact McNemar p = 0.0063)."
    )


def test_sentence_when_they_split_evenly_or_agree() -> None:
    a, b = _outcomes(3, 3, 2, 2)
    assert compare("x", a, "y", b).sentence() == (
        "x resolved 3 bugs that y did not, and y 3 that x did not: no difference on these "
        "bugs (exact McNemar p = 1)."
    )
    a, b = _outcomes(0, 0, 4, 6)
    assert compare("x", a, "y", b).sentence() == "x and y resolved the same bugs."


def test_headline_follows_the_numbers() -> None:
    a, b = _outcomes(4, 1, 10, 5)
    rates = {"codex": wilson(14, 20), "sonnet": wilson(11, 20)}
    assert headline(rates, [compare("codex", a, "sonnet", b)]) == (
        "codex leads: on the 20 tasks both codex and sonnet were scored on, codex resolved "
        "14 and sonnet 11, a difference of +15% (95% CI -11% to +25%); not distinguishable "
        "(exact McNemar p = 0.38)."
    )
    a, b = _outcomes(12, 0, 2, 6)
    rates = {"codex": wilson(14, 20), "sonnet": wilson(2, 20)}
    assert headline(rates, [compare("codex", a, "sonnet", b)]).endswith(
        "; a real difference (exact McNemar p = 0.00049)."
    )
    assert headline(
        {"a": wilson(5, 10), "b": wilson(5, 10)}, [compare("a", [True], "b", [True])]
    ) == ("a and b tie: each resolved 1 of the 1 tasks both were scored on (exact McNemar p = 1).")
    assert headline({}, []) == "No agent raced."
