"""The report's "how sure": each agent's resolve rate with its interval, each pair of
agents (and each judge policy against the leading agent) compared over the same tasks,
and the headline sentence that opens every report. The numbers are
:mod:`bugbout.core.report.statistics`'s and :mod:`bugbout.core.report.headline`'s; this
module picks the tasks they are computed on."""

from __future__ import annotations

from itertools import combinations

from pydantic import Field

from bugbout.core.report.headline import headline, leaders, ranking
from bugbout.core.report.statistics import Comparison, Rate, adjusted, compare, wilson
from bugbout.core.store.race_records import Score
from bugbout.core.store.records import Record
from bugbout.core.store.verdict_records import Verdict

METHOD = (
    "resolve rates: Wilson score interval (95%); two over the tasks both were scored on: "
    "exact McNemar test on the tasks where they differ, the difference of rates with the "
    "exact conditional interval (Clopper-Pearson on the split of those tasks), several "
    "comparisons Holm-adjusted, each interval at the level matching its adjusted p; the "
    "leader ranked by these pairwise comparisons"
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
    level: float = 0.95
    """The confidence level of ``low`` to ``high`` (above 95% when Holm-adjusted)."""
    p_value: float
    p_adjusted: float
    """``p_value`` Holm-adjusted over the comparisons of its table (itself when alone)."""
    tasks_needed: int | None = None
    """Tasks like these a McNemar test needs to tell a difference of this size apart
    (5% level, 80% power); ``None`` without a difference."""
    abstained: int = 0
    """For a judge policy: the tasks it abstained on, left out of ``tasks``."""
    sentence: str


class Confidence(Record):
    """How sure the report's numbers are."""

    method: str = METHOD
    headline: str = ""
    leader: list[str] = Field(default_factory=list)
    """The contestants ranked first (several on a tie); empty when none was scored."""
    agents: list[RateInterval] = Field(default_factory=list)
    pairs: list[PairedComparison] = Field(default_factory=list)
    judges: list[PairedComparison] = Field(default_factory=list)
    """Each judge policy's picks against the leading agent, on the tasks it picked on."""


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
    pairs = adjusted(
        [_compare(a, resolved[a], b, resolved[b]) for a, b in combinations(contestants, 2)]
    )
    ranked = ranking(rates, pairs)
    judges: list[tuple[Comparison, int]] = []
    if ranked:
        best = ranked[0]
        for policy in policies:
            picked, abstained = {}, 0
            for t in resolved[best]:
                verdict = verdict_of.get((t, policy))
                if verdict is not None and verdict.pick is None:
                    abstained += 1  # no pick is not a wrong pick
                elif verdict is not None and verdict.pick is not None:
                    picked[t] = score.get((t, verdict.pick)) == Score.RESOLVED
            judges.append((_compare(f"judge {policy}", picked, best, resolved[best]), abstained))
    judged = adjusted([found for found, _ in judges])
    return Confidence(
        headline=headline(rates, pairs),
        leader=leaders(rates, pairs),
        agents=[interval(name, rate) for name, rate in rates.items()],
        pairs=[_record(found) for found in pairs],
        judges=[
            _record(found, abstained) for found, (_, abstained) in zip(judged, judges, strict=True)
        ],
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


def _record(found: Comparison, abstained: int = 0) -> PairedComparison:
    sentence = found.sentence()
    if abstained:
        sentence = (
            f"{found.a} abstained on {abstained} of the {found.total + abstained} tasks "
            f"{found.b} was scored on (no pick, not a wrong one)"
            + (f"; on the {found.total} it picked on: {sentence}" if found.total else ".")
        )
    return PairedComparison(
        a=found.a,
        b=found.b,
        tasks=found.total,
        only_a=found.only_a,
        only_b=found.only_b,
        difference=round(found.difference, 4),
        low=round(found.low, 4),
        high=round(found.high, 4),
        level=round(found.level, 6),
        p_value=round(found.p_value, 6),
        p_adjusted=round(found.p, 6),
        tasks_needed=found.needed,
        abstained=abstained,
        sentence=sentence,
    )
