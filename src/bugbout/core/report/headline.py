"""The sentence that opens every report: which agent leads and whether the data tell it
apart from the closest other.

Agents are ranked pairwise, never by a count over different tasks: for each two, over
the tasks both were scored on, the one that resolved more of the tasks where they differ
wins. Agents are ranked by wins minus losses (a Copeland ranking); the first leads alone
when it resolved more than every other agent on the tasks both were scored on, else the
agents level with it share the lead, each named. The verdict on the leader is its
comparison with the closest other agent (the largest Holm-adjusted p-value): "a real
difference" below 0.05, "not distinguishable" otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence

from bugbout.core.report.statistics import Comparison, Rate


def oriented(pairs: Sequence[Comparison]) -> dict[tuple[str, str], Comparison]:
    """Every comparison under both orders: ``(x, y)`` has ``x`` as its ``a``."""
    found: dict[tuple[str, str], Comparison] = {}
    for pair in pairs:
        found[(pair.a, pair.b)] = pair
        found[(pair.b, pair.a)] = pair.flipped()
    return found


def ranking(rates: dict[str, Rate], pairs: Sequence[Comparison]) -> list[str]:
    """The agents scored on at least one task, best first: by pairwise wins minus losses,
    then by resolve rate, then by name."""
    scored = [name for name, rate in rates.items() if rate.total]
    return sorted(
        scored, key=lambda name: (-_score(name, scored, oriented(pairs)), -rates[name].value, name)
    )


def leaders(rates: dict[str, Rate], pairs: Sequence[Comparison]) -> list[str]:
    """The agents ranked first: the first, alone when it resolved more than every other
    agent on the tasks both were scored on; else also those level with it on pairwise
    wins minus losses, and those it did not resolve more than."""
    ranked = ranking(rates, pairs)
    by_pair = oriented(pairs)
    scores = {name: _score(name, ranked, by_pair) for name in ranked}
    return [
        name
        for name in ranked
        if name == ranked[0]
        or scores[name] == scores[ranked[0]]
        or by_pair[(ranked[0], name)].winner != ranked[0]
    ]


def headline(rates: dict[str, Rate], pairs: Sequence[Comparison]) -> str:
    """The report's first sentence, from each agent's rate and every pair's comparison
    (Holm-adjusted when there are several)."""
    if not rates:
        return "No agent raced."
    ranked = ranking(rates, pairs)
    unscored = sorted(name for name in rates if name not in ranked)
    if not ranked:
        return f"No agent was scored on any task: {_names(unscored)} had every attempt left out."
    tail = f" ({_names(unscored)} scored on no task.)" if unscored else ""
    if len(ranked) == 1:
        return f"{ranked[0]} resolved {rates[ranked[0]].text()}.{tail}"
    by_pair = oriented(pairs)
    top = leaders(rates, pairs)
    if len(top) > 1:
        return _shared(top, by_pair) + tail
    leader = top[0]
    others = ranked[1:]
    closest = max(others, key=lambda name: (by_pair[(leader, name)].p, -others.index(name)))
    return _leads(by_pair[(leader, closest)], len(others)) + tail


def _score(name: str, names: Sequence[str], by_pair: dict[tuple[str, str], Comparison]) -> int:
    """Pairwise wins minus losses against ``names``."""
    results = [by_pair[(name, other)] for other in names if other != name]
    return sum(pair.only_a > pair.only_b for pair in results) - sum(
        pair.only_a < pair.only_b for pair in results
    )


def _leads(pair: Comparison, others: int) -> str:
    """The leader ``pair.a`` against the closest other ``pair.b`` (it resolved more)."""
    leader, closest = pair.a, pair.b
    who = closest if others == 1 else f"{closest} (the closest of {others} others)"
    verdict = "a real difference" if pair.decided else "not distinguishable"
    return (
        f"{leader} leads: on the {pair.total} tasks both {leader} and {who} were scored on, "
        f"{leader} resolved {pair.both + pair.only_a} and {closest} {pair.both + pair.only_b}, "
        f"a difference of {pair.interval_text()}; {verdict} ({pair.p_text()})."
    )


def _shared(top: list[str], by_pair: dict[tuple[str, str], Comparison]) -> str:
    """Several agents level at the top, every one named."""
    if len(top) == 2:  # two agents: say how they split
        pair = by_pair[(top[0], top[1])]
        if pair.total == 0:
            return f"{top[0]} and {top[1]} share the lead: they were never scored on the same task."
        if pair.only_a == pair.only_b:
            return (
                f"{top[0]} and {top[1]} tie: each resolved {pair.both + pair.only_a} of the "
                f"{pair.total} tasks both were scored on ({pair.p_text()})."
            )
    splits = ", ".join(
        f"{a} {by_pair[(a, b)].only_a}-{by_pair[(a, b)].only_b} {b}"
        for i, a in enumerate(top)
        for b in top[i + 1 :]
    )
    return (
        f"{_names(top)} share the lead: pairwise over the tasks each two were scored on, "
        f"none is ahead of all the others (bugs only one of each two resolved: {splits})."
    )


def _names(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
