"""What a bout cost: a price per model, each attempt's cost, each agent's cost per
resolved bug, and the agents no other is both cheaper and better than.

Prices are USD per million tokens. The packaged table (``bugbout/data/prices.json``,
dated by its ``as-of``) comes with the project's ``prices:``; an entry of ``prices:``
named like a packaged one replaces it. An entry prices the models its ``model`` pattern
matches (``*`` for any text), the whole name or the part after a provider prefix
(``anthropic/claude-sonnet-4-5``). Of the entries that match, the project's win over
the packaged ones, then the most specific: the longest pattern.

An attempt without token usage costs ``None`` ("not reported"), never 0; so does one
whose model has no price ("no price").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from importlib import resources
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from bugbout.core.contract.settings import PriceSettings
from bugbout.core.store.records import RETRYABLE, Attempt, Record

if TYPE_CHECKING:
    from bugbout.core.report.report import AgentRow

PRICES_RESOURCE = "prices.json"
"""The packaged price table, in :mod:`bugbout.data`."""
PER_TOKENS = 1_000_000
"""Prices are per this many tokens."""


@dataclass(frozen=True)
class PriceTable:
    """Named prices, the names the project set, and the packaged table's date."""

    entries: tuple[tuple[str, PriceSettings], ...]
    as_of: str
    own: frozenset[str] = frozenset()
    """Entries of the project's ``prices:``: they win over every packaged one."""

    def find(self, model: str | None) -> tuple[str, PriceSettings] | None:
        """The entry that prices ``model`` (its name and price): of those whose pattern
        matches, the project's before the packaged, then the longest pattern."""
        if not model:
            return None
        names = {model.lower(), model.rsplit("/", 1)[-1].lower()}
        found = [
            (name, price)
            for name, price in self.entries
            if any(fnmatchcase(candidate, _pattern(name, price)) for candidate in names)
        ]
        if not found:
            return None
        return max(
            found,
            key=lambda entry: (entry[0] in self.own, len(_pattern(*entry).replace("*", ""))),
        )


def _pattern(name: str, price: PriceSettings) -> str:
    return (price.model or name).lower()


def packaged_prices() -> PriceTable:
    """The price table shipped with bugbout."""
    text = resources.files("bugbout.data").joinpath(PRICES_RESOURCE).read_text("utf-8")
    data = json.loads(text)
    entries = tuple(
        (name, PriceSettings.model_validate(entry)) for name, entry in data["prices"].items()
    )
    return PriceTable(entries, str(data["as-of"]))


def price_table(prices: Mapping[str, PriceSettings] | None = None) -> PriceTable:
    """The project's ``prices:`` with the packaged table. An entry named like a packaged
    one takes its place (and its model pattern, unless it sets ``model``)."""
    packaged = packaged_prices()
    own = dict(prices or {})
    known = dict(packaged.entries)
    for name, price in own.items():
        if name in known and price.model is None:
            own[name] = price.model_copy(update={"model": known[name].model})
    entries = {**known, **own}
    return PriceTable(tuple(entries.items()), packaged.as_of, frozenset(own))


def attempt_cost(usage: Mapping[str, int], price: PriceSettings) -> float:
    """USD an attempt's token usage cost at ``price`` (each kind at its own rate)."""
    cached = price.input if price.cached_input is None else price.cached_input
    written = price.input if price.cache_write is None else price.cache_write
    total = (
        usage.get("input_tokens", 0) * price.input
        + usage.get("cache_read_tokens", 0) * cached
        + usage.get("cache_write_tokens", 0) * written
        + usage.get("output_tokens", 0) * price.output
    )
    return total / PER_TOKENS


# -- the report's section -----------------------------------------------------------------


class CostRow(Record):
    """What one agent's attempts cost, every round included."""

    name: str
    role: Literal["contestant", "examiner"]
    model: str | None = None
    price: str | None = None
    """The price entry of its model (``None``: no price)."""
    attempts: int = 0
    reported: int = 0
    """Attempts that reported token usage."""
    priced: int = 0
    """Of those, attempts with a price: the ones ``cost`` adds up."""
    charged: int = 0
    """Attempts that spent: those that reported usage, and those without usage whose
    agent ran (not left unscored: an agent that never started spent nothing)."""
    cost: float | None = None
    """USD over the priced attempts; ``None`` when there is none."""
    cost_per_attempt: float | None = None
    """``cost / priced``."""
    resolved: int = 0
    resolve_rate: float | None = None
    cost_per_resolved: float | None = None
    """``cost_per_attempt * charged / resolved``: the whole cost when every attempt that
    spent is priced, else scaled up from the priced ones to those; ``None`` without a
    resolved bug."""
    wall_time: float = 0.0
    wall_time_per_resolved: float | None = None
    """``wall_time / resolved``."""
    pareto: bool = False
    """No other contestant resolves at least as often for at most the cost, and better on one."""


class Costs(Record):
    """What the bout cost, agent by agent."""

    prices_as_of: str = ""
    """The date of the packaged price table."""
    agents: list[CostRow] = Field(default_factory=list)
    cost: float | None = None
    """USD over every priced attempt; ``None`` when there is none."""
    unpriced: list[str] = Field(default_factory=list)
    """Models that reported token usage but have no price."""


def costs(attempts: list[Attempt], agents: list[AgentRow], table: PriceTable) -> Costs:
    """Each agent's cost and, for contestants, cost and wall time per resolved bug."""
    rows: dict[tuple[str, str], CostRow] = {}
    unpriced: set[str] = set()
    for attempt in sorted(attempts, key=lambda a: (a.role, a.contestant, a.round)):
        row = rows.setdefault(
            (attempt.role, attempt.contestant), CostRow(name=attempt.contestant, role=attempt.role)
        )
        found = table.find(attempt.model)
        row.model, row.price = attempt.model, found[0] if found else None
        row.attempts += 1
        row.wall_time += attempt.wall_time
        row.charged += bool(attempt.usage) or attempt.status not in RETRYABLE
        if not attempt.usage:
            continue
        row.reported += 1
        if found is None:
            unpriced.add(attempt.model or "(model not named)")
            continue
        row.priced += 1
        row.cost = (row.cost or 0.0) + attempt_cost(attempt.usage, found[1])
    scored = {agent.contestant: agent for agent in agents}
    for row in rows.values():
        if row.cost is not None:
            row.cost_per_attempt = row.cost / row.priced
        agent = scored.get(row.name) if row.role == "contestant" else None
        if agent is None:
            continue
        row.resolved, row.resolve_rate = agent.resolved, agent.resolve_rate
        if agent.resolved:
            row.wall_time_per_resolved = row.wall_time / agent.resolved
            if row.cost_per_attempt is not None:
                row.cost_per_resolved = row.cost_per_attempt * row.charged / agent.resolved
    for row in pareto_front(list(rows.values())):
        row.pareto = True
    known = [row.cost for row in rows.values() if row.cost is not None]
    return Costs(
        prices_as_of=table.as_of,
        agents=list(rows.values()),
        cost=sum(known) if known else None,
        unpriced=sorted(unpriced),
    )


def pareto_front(rows: list[CostRow]) -> list[CostRow]:
    """The contestants that no other beats on both cost per resolved bug and resolve rate
    (at most the cost and at least the rate, and better on one); equal points all stay."""
    points = {
        id(row): (row.cost_per_resolved, row.resolve_rate)
        for row in rows
        if row.role == "contestant"
        and row.cost_per_resolved is not None
        and row.resolve_rate is not None
    }

    def beats(a: tuple[float, float], b: tuple[float, float]) -> bool:
        return a[0] <= b[0] and a[1] >= b[1] and a != b

    return [
        row
        for row in rows
        if id(row) in points and not any(beats(other, points[id(row)]) for other in points.values())
    ]


def how_to_price(models: list[str]) -> str:
    """What to add to ``bugbout.yaml`` to price ``models``."""
    return (
        f"no price for {', '.join(models)}: add an entry per model under `prices:` in "
        f"bugbout.yaml, e.g. `prices: {{my-model: {{model: '{models[0]}', input: 3, "
        "cached-input: 0.3, output: 15}}` (USD per million tokens)"
    )
