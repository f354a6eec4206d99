"""The decision that opens every report: which contestant to pick, joining resolve rate,
certainty and cost in one sentence, and the few numbers behind it.

The leader is the report's (:mod:`bugbout.core.report.headline`). The contestants the
data do not tell apart from it (its paired comparison's Holm-adjusted p at or above
0.05) are as good on this evidence; of those, the pick is the cheapest per resolved bug
when each has a cost, else the leader. A contestant distinguishably behind the leader is
said to resolve fewer. Nothing is picked when no contestant resolved a task.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from bugbout.core.report.statistics import LEVEL
from bugbout.core.store.records import Record

if TYPE_CHECKING:
    from bugbout.core.report.confidence import PairedComparison
    from bugbout.core.report.report import Report

Standing = Literal["picked", "not distinguishable", "fewer"]


class Option(Record):
    """One contestant as the decision weighs it."""

    name: str
    resolved: int = 0
    tasks: int = 0
    low: float | None = None
    high: float | None = None
    """The resolve rate's 95% interval."""
    cost_per_resolved: float | None = None
    """USD per resolved bug; ``None``: not known (no price, no usage, nothing resolved)."""
    standing: Standing = "not distinguishable"
    """Against the pick: itself, as good on this evidence, or distinguishably behind."""
    p_adjusted: float | None = None
    """Its comparison with the leader (the leader's: with the pick), Holm-adjusted;
    ``None`` for the pick."""


class Decision(Record):
    """The report's recommendation."""

    text: str = ""
    """The one sentence the report opens with."""
    pick: str | None = None
    """The contestant recommended; ``None`` when none resolved a task."""
    distinguishable: bool = False
    """Whether the pick resolves distinguishably more than every other contestant."""
    options: list[Option] = Field(default_factory=list)
    """Every contestant, the pick first, then as the report ranks them."""


def decide(report: Report) -> Decision:
    """The recommendation from the report's rates, comparisons and costs."""
    sure = report.confidence
    costs = {row.name: row.cost_per_resolved for row in report.costs.agents}
    rates = {row.name: row for row in sure.agents if row.tasks}
    if not rates:
        return Decision(text="No contestant was scored on any task: nothing to decide.")
    leader = sure.leader[0] if sure.leader else max(rates, key=lambda n: rates[n].resolved)
    options = {
        name: Option(
            name=name,
            resolved=row.resolved,
            tasks=row.tasks,
            low=row.low,
            high=row.high,
            cost_per_resolved=costs.get(name),
        )
        for name, row in rates.items()
    }
    for name, option in options.items():
        if name != leader:
            pair = _pair(sure.pairs, leader, name)
            option.p_adjusted = pair.p_adjusted if pair else None
            behind = pair is not None and pair.p_adjusted < LEVEL and _leader_ahead(pair, leader)
            option.standing = "fewer" if behind else "not distinguishable"
    if not options[leader].resolved:
        return Decision(
            text=f"No contestant resolved any of the {report.found.scored} scored tasks: "
            "nothing to pick.",
            options=list(options.values()),
        )
    level = [options[leader]] + [
        o for name, o in options.items() if name != leader and o.standing != "fewer"
    ]
    cheapest = _cheapest(level)
    pick = cheapest or options[leader]
    pick.standing = "picked"
    if pick.name != leader:
        options[leader].standing = "not distinguishable"
        options[leader].p_adjusted = options[pick.name].p_adjusted
        pick.p_adjusted = None
    ordered = [pick] + [o for name, o in options.items() if name != pick.name]
    tied = [] if cheapest else [name for name in sure.leader if name in options]
    return Decision(
        text=_sentence(pick, ordered[1:], report.found.scored, tied=tied, cheapest=bool(cheapest)),
        pick=pick.name,
        distinguishable=len(level) == 1 and len(options) > 1,
        options=ordered,
    )


def _pair(pairs: list[PairedComparison], a: str, b: str) -> PairedComparison | None:
    return next((p for p in pairs if {p.a, p.b} == {a, b}), None)


def _leader_ahead(pair: PairedComparison, leader: str) -> bool:
    ahead, behind = (pair.only_a, pair.only_b) if pair.a == leader else (pair.only_b, pair.only_a)
    return ahead > behind


def _cheapest(level: list[Option]) -> Option | None:
    """The cheapest per resolved bug of ``level``, when each of them resolved a bug at a
    known cost; ``None`` otherwise."""
    costed = [o for o in level if o.cost_per_resolved is not None]
    if len(costed) < len(level):
        return None
    return min(costed, key=lambda o: (o.cost_per_resolved or 0.0, -o.resolved))


def _sentence(
    pick: Option, others: list[Option], tasks: int, *, tied: list[str], cheapest: bool
) -> str:
    """``Pick X: resolves 12/20 (41-78%), $0.38 a resolved bug; Y is not ...``; when no
    cost decides between leaders that ``tied``, it says they tie instead of naming one
    the leader."""
    level = [o for o in others if o.standing == "not distinguishable"]
    behind = [o for o in others if o.standing == "fewer"]
    facts = f"resolves {_rate(pick)}" + (
        "" if pick.cost_per_resolved is None else f", ${pick.cost_per_resolved:.2f} a resolved bug"
    )
    if not others:
        note = "" if pick.cost_per_resolved is not None else "; cost per resolved bug not known"
        return f"Pick {pick.name}, the only contestant: {facts}{note}."
    if level and len(tied) > 1:
        opening = (
            f"No contestant is distinguishably better on {tasks} scored tasks; "
            f"{_names(tied)} tie for the lead: pick any of them ({pick.name} {facts})"
        )
    elif level:
        why = "the cheapest per resolved bug" if cheapest else "the leader"
        opening = (
            f"No contestant is distinguishably better on {tasks} scored tasks; "
            f"pick {pick.name}, {why}: {facts}"
        )
    else:
        opening = f"Pick {pick.name}: {facts}"
    costed = [o for o in level if o.cost_per_resolved is not None and pick.cost_per_resolved]
    clauses = [_versus(pick, other) for other in costed]
    uncosted = [o for o in level if o not in costed]
    if uncosted:
        clauses.append(f"{_counts(uncosted)} {_verb(uncosted, 'is', 'are')} not distinguishable")
    if behind:
        clauses.append(
            f"{_counts(behind)} {_verb(behind, 'resolves', 'resolve')} distinguishably fewer"
        )
    unknown = [o.name for o in [pick, *level] if o.cost_per_resolved is None]
    if unknown:
        clauses.append(f"cost per resolved bug not known for {_names(unknown)}")
    return "; ".join([opening, *clauses]) + "."


def _versus(pick: Option, other: Option) -> str:
    """An option as good on this evidence, with a known cost: against the pick's."""
    ratio = (other.cost_per_resolved or 0.0) / (pick.cost_per_resolved or 1.0)
    text = f"{_counts([other])} is not distinguishable and costs"
    if round(ratio, 1) == 1.0:
        return f"{text} the same"
    return f"{text} {ratio:.1f}x " + ("more" if ratio > 1 else "as much")


def _counts(options: list[Option]) -> str:
    """``beta (10/20) and gamma (4/20)``."""
    return _names([f"{o.name} ({o.resolved}/{o.tasks})" for o in options])


def _verb(options: list[Option], one: str, several: str) -> str:
    return one if len(options) == 1 else several


def _rate(option: Option) -> str:
    """``12/20 (41-78%)``."""
    return f"{option.resolved}/{option.tasks} ({interval(option)})"


def interval(option: Option) -> str:
    """Its resolve rate's interval, ``41-78%`` (``-``: none, it was scored on no task)."""
    if option.low is None or option.high is None:
        return "-"
    return f"{round(option.low * 100)}-{round(option.high * 100)}%"


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
