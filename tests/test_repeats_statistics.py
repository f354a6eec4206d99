"""The statistics of repeats, checked against an independent computation: scipy's t
distribution and paired t-test, numpy, subsets counted one by one, and hand values."""

from __future__ import annotations

import json
import math
from itertools import combinations

import numpy as np
import pytest
from scipy import special, stats

from bugbout.core.report.clustered import (
    clustered_mean,
    incomplete_beta,
    paired_t,
    pass_all,
    pass_at,
    t_quantile,
    t_two_sided,
)
from bugbout.core.report.repeats import (
    AgentRepeats,
    AtK,
    PairRepeats,
    Repeats,
    TaskRate,
    repeats_report,
)
from bugbout.core.report.report import Report, report_schema
from bugbout.core.report.statistics import holm
from report_records import _validate


def _subsets(n: int, c: int, k: int) -> tuple[float, float]:
    """The share of k-subsets of n attempts (c resolving) with at least one resolving
    attempt, and with only resolving attempts: counted one by one."""
    attempts = [True] * c + [False] * (n - c)
    drawn = list(combinations(attempts, k))
    return sum(any(d) for d in drawn) / len(drawn), sum(all(d) for d in drawn) / len(drawn)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7])
def test_pass_at_k_and_pass_hat_k_are_the_shares_of_k_subsets(n: int) -> None:
    for c in range(n + 1):
        for k in range(1, n + 1):
            anyone, everyone = _subsets(n, c, k)
            assert pass_at(n, c, k) == pytest.approx(anyone, abs=1e-12)
            assert pass_all(n, c, k) == pytest.approx(everyone, abs=1e-12)
            # Chen et al.'s numerically stable form of the same estimator
            stable = 1.0 if n - c < k else 1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1))
            assert pass_at(n, c, k) == pytest.approx(stable, abs=1e-12)


def test_the_t_distribution_matches_scipy() -> None:
    for a, b, x in [
        (0.5, 0.5, 0.3),
        (2, 0.5, 0.9),
        (10, 0.5, 0.99),
        (1.5, 0.5, 0.01),
        (60, 0.5, 0.7),
    ]:
        assert incomplete_beta(a, b, x) == pytest.approx(special.betainc(a, b, x), rel=1e-10)
    for df in (1, 2, 3, 9, 29, 200):
        for q in (0.6, 0.8, 0.975, 0.995):
            assert t_quantile(q, df) == pytest.approx(stats.t.ppf(q, df), rel=1e-9)
        for t in (0.0, 0.4, 2.1, -3.0, 12.0):
            assert t_two_sided(t, df) == pytest.approx(2 * stats.t.sf(abs(t), df), rel=1e-9)


def test_the_clustered_interval_is_the_t_interval_of_the_per_task_means() -> None:
    rates = [1.0, 2 / 3, 0.0, 1 / 3, 1.0, 2 / 3]
    mean = clustered_mean(rates)
    low, high = stats.t.interval(0.95, len(rates) - 1, loc=np.mean(rates), scale=stats.sem(rates))
    assert mean.value == pytest.approx(np.mean(rates))
    assert mean.se == pytest.approx(stats.sem(rates))
    assert (mean.low, mean.high) == (pytest.approx(low), 1.0)  # kept within [0, 1]
    assert high > 1
    # a hand value: 0.4, 0.5, 0.6 -> mean 0.5, sd 0.1, t(0.975, 2) = 4.302652729749464
    hand = clustered_mean([0.4, 0.5, 0.6])
    assert hand.se == pytest.approx(0.1 / math.sqrt(3))
    half = 4.302652729749464 * 0.1 / math.sqrt(3)
    assert (hand.low, hand.high) == (pytest.approx(0.5 - half), pytest.approx(0.5 + half))
    assert clustered_mean([0.5]).low is None  # one task: no spread to measure


def test_the_paired_test_matches_scipys_paired_t_test() -> None:
    first = [1.0, 2 / 3, 1 / 3, 1.0, 0.0, 2 / 3, 1.0, 1 / 3]
    second = [1 / 3, 2 / 3, 0.0, 1 / 3, 0.0, 1.0, 1 / 3, 0.0]
    test = paired_t([a - b for a, b in zip(first, second, strict=True)])
    expected = stats.ttest_rel(first, second)
    interval = expected.confidence_interval(0.95)
    assert test.p_value == pytest.approx(expected.pvalue, rel=1e-9)
    assert (test.low, test.high) == (pytest.approx(interval.low), pytest.approx(interval.high))
    sd = np.std(np.subtract(first, second), ddof=1)
    df = len(first) - 1
    power = (stats.t.ppf(0.975, df) + stats.t.ppf(0.8, df)) * sd / math.sqrt(len(first))
    assert test.detectable == pytest.approx(power)
    # no spread: the same difference everywhere cannot be tested, none at all is p = 1
    assert paired_t([1 / 3, 1 / 3, 1 / 3]).p_value is None
    assert paired_t([0.0, 0.0]).p_value == 1.0


def test_the_report_of_repeats_on_known_samples() -> None:
    yes, no = True, False
    samples = {
        ("t1", "a"): [yes, yes, no], ("t2", "a"): [no, no, no], ("t3", "a"): [yes, yes, yes],
        ("t1", "b"): [no, no, no], ("t2", "b"): [yes, no, no], ("t3", "b"): [yes, no],
        ("t1", "c"): [yes, no, no], ("t2", "c"): [no, no, yes], ("t3", "c"): [yes, yes, no],
    }  # fmt: skip
    report = repeats_report(["a", "b", "c"], samples, 3)
    a, b, c = report.agents
    assert (a.tasks, a.samples, a.resolved) == (3, 9, 5)
    assert a.rate == pytest.approx((2 / 3 + 0 + 1) / 3)
    # pass@2: t1 1 - C(1,2)/C(3,2) = 1, t2 0, t3 1; pass^2: t1 C(2,2)/C(3,2) = 1/3, t2 0, t3 1
    assert a.pass_at[1].value == pytest.approx(2 / 3)
    assert a.pass_all[1].value == pytest.approx(4 / 9)
    # b has 2 samples on t3: pass@3 and pass^3 count only t1 and t2
    assert b.pass_at[2].tasks == 2
    assert b.pass_at[2].value == pytest.approx(0.5)
    assert b.pass_all[2].value == 0.0
    assert b.rate == pytest.approx((0 + 1 / 3 + 1 / 2) / 3)
    low, high = stats.t.interval(
        0.95, 2, loc=np.mean([2 / 3, 0, 1]), scale=stats.sem([2 / 3, 0, 1])
    )
    assert (a.low, a.high) == (pytest.approx(max(0, low)), pytest.approx(min(1, high)))
    assert c.pass_at[2].value == pytest.approx(1.0)  # every task resolved at least once
    rates = {name: [sum(samples[(t, name)]) / len(samples[(t, name)]) for t in ("t1", "t2", "t3")]
             for name in "abc"}  # fmt: skip
    pairs = [("a", "b"), ("a", "c"), ("b", "c")]
    plain = [stats.ttest_rel(rates[x], rates[y]).pvalue for x, y in pairs]
    for pair, p, adjusted in zip(report.pairs, plain, holm(plain), strict=True):
        assert (pair.first, pair.second) in pairs
        assert pair.p_value == pytest.approx(p)
        assert pair.p_adjusted == pytest.approx(adjusted)
        # the interval is drawn at the level matching the adjusted p: it excludes 0
        # exactly when the adjusted p is below 5%
        assert pair.level == pytest.approx(1 - 0.05 * p / adjusted)
        assert pair.low is not None and pair.high is not None
        assert (pair.low > 0 or pair.high < 0) == (adjusted < 0.05)


def test_no_repeats_no_figures() -> None:
    assert repeats_report(["a"], {("t1", "a"): [True]}, 1).agents == []


def test_the_report_schema_describes_repeats_and_they_validate() -> None:
    """The hand-written schema and the records stay in step, and a report with repeats
    (one task each: intervals null) validates."""
    schema = report_schema()
    for model, key in (
        (AgentRepeats, "agent_repeats"),
        (PairRepeats, "pair_repeats"),
        (AtK, "at_k"),
        (TaskRate, "task_rate"),
    ):
        assert set(schema["$defs"][key]["properties"]) == set(model.model_fields), model
    assert set(schema["properties"]["repeats"]["properties"]) == set(Repeats.model_fields)
    samples = {("t1", "a"): [True, False], ("t1", "b"): [False, False]}
    report = Report(repeats=repeats_report(["a", "b"], samples, 2))
    _validate(json.loads(report.model_dump_json(by_alias=True)))
