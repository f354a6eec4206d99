"""The report's "how sure": each agent's resolve rate with its interval, each pair of
agents (and each judge policy against the best agent) compared over the same tasks, and
the headline sentence that opens every report. The numbers are
:mod:`bugbout.core.report.statistics`'s; this module picks the tasks they are computed on."""

from __future__ import annotations

from itertools import combinations

from pydantic import Field

from bugbout.core.report.statistics import RESAMPLES, Comparison, Rate, compare, headline, wilson
from bugbout.core.store.records import Record, Score, Verdict

METHOD = (
    "resolve rates: Wilson score interval (95%); differences: paired bootstrap over "
    f"tasks ({RESAMPLES:,} resamples, seed 0, 95% percentile interval); tests: exact "
    "McNemar on the tasks where the two differ"
)


class RateInterval(Record):
    """An agent's (or a policy's picks') resolve rate over the tasks it counted on."""

    name: str
    resolved: int
    tasks: int
    rate: float | None = None
    low: float | None = None
    high: float | None = None
    text: str = ""


class PairedComparison(Record):
    """Two over the same tasks: who resolved what the other did not, and whether the
    data tell them apart."""

    a: str
    b: str
    tasks: int
    only_a: int
    only_b: int
    difference: float
    low: float
    high: float
    p_value: float
    tasks_needed: int | None = None
    """Tasks like these a McNemar test needs to tell a difference of this size apart
    (5% level, 80% power); ``None`` without a difference."""
    sentence: str


class Confidence(Record):
    """How sure the report's numbers are."""

    method: str = METHOD
    headline: str = ""
    agents: list[RateInterval] = Field(default_factory=list)
    pairs: list[PairedComparison] = Field(default_factory=list)
    judges: list[PairedComparison] = Field(default_factory=list)
    """Each judge policy's picks against the best single agent."""


def confidence(
    contestants: list[str],
    policies: list[str],
    tasks: list[str],
    score: dict[tuple[str, str], Score],
    verdict_of: dict[tuple[str, str], Verdict],
) -> Confidence:
    """Intervals and comparisons from each (task, contestant)'s counted score."""
    resolved = {
        name: {t: score[(t, name)] == Score.RESOLVED for t in tasks if (t, name) in score}
        for name in contestants
    }
    rates = {
        name: wilson(sum(by_task.values()), len(by_task)) for name, by_task in resolved.items()
    }
    agents = [interval(name, rate) for name, rate in rates.items()]
    pairs = [_paired(a, resolved[a], b, resolved[b]) for a, b in combinations(contestants, 2)]
    ranked = sorted(rates, key=lambda name: (-rates[name].successes, name))
    leader_pair = None
    if len(ranked) > 1:
        leader_pair = _compare(ranked[0], resolved[ranked[0]], ranked[1], resolved[ranked[1]])
    judges = []
    if ranked:
        best = ranked[0]
        for policy in policies:
            picks = {
                t: bool(
                    (verdict := verdict_of.get((t, policy))) is not None
                    and verdict.pick is not None
                    and score.get((t, verdict.pick)) == Score.RESOLVED
                )
                for t in resolved[best]
            }
            judges.append(_paired(f"judge {policy}", picks, best, resolved[best]))
    return Confidence(
        headline=headline(rates, leader_pair),
        agents=agents,
        pairs=pairs,
        judges=judges,
    )


def interval(name: str, rate: Rate) -> RateInterval:
    """``rate`` as the report shows it (no figures without tasks)."""
    return RateInterval(
        name=name,
        resolved=rate.successes,
        tasks=rate.total,
        rate=rate.value if rate.total else None,
        low=rate.low if rate.total else None,
        high=rate.high if rate.total else None,
        text=rate.text(),
    )


def _compare(a: str, by_a: dict[str, bool], b: str, by_b: dict[str, bool]) -> Comparison:
    shared = sorted(set(by_a) & set(by_b))
    return compare(a, [by_a[t] for t in shared], b, [by_b[t] for t in shared])


def _paired(a: str, by_a: dict[str, bool], b: str, by_b: dict[str, bool]) -> PairedComparison:
    found = _compare(a, by_a, b, by_b)
    return PairedComparison(
        a=a,
        b=b,
        tasks=found.total,
        only_a=found.only_a,
        only_b=found.only_b,
        difference=round(found.difference, 4),
        low=round(found.low, 4),
        high=round(found.high, 4),
        p_value=round(found.p_value, 6),
        tasks_needed=found.needed,
        sentence=found.sentence(),
    )
