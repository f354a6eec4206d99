"""What a bout cost: each attempt's cost at the price table's prices
(:mod:`bugbout.core.plumbing.models.prices`), each agent's cost per resolved bug, and the agents
no other is both cheaper and better than; apart from the agents', what drafting its tasks'
statements cost (``tasks.statement: drafted``).

An attempt without token usage costs ``None`` ("not reported"), never 0; so does one
whose model has no price ("no price").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from bugbout.core.plumbing.models.budget import not_run_reason
from bugbout.core.plumbing.models.prices import (
    PriceTable,
    attempt_cost,
    packaged_prices,
    price_table,
)
from bugbout.core.store.drafts import Draft
from bugbout.core.store.race_records import RETRYABLE, Attempt
from bugbout.core.store.records import Record

if TYPE_CHECKING:
    from bugbout.core.report.report import AgentRow

__all__ = [
    "CostRow",
    "Costs",
    "PriceTable",
    "attempt_cost",
    "costs",
    "how_to_price",
    "packaged_prices",
    "pareto_front",
    "price_table",
]


# -- the report's section -----------------------------------------------------------------


class CostRow(Record):
    """What one agent's attempts cost, every round included; or, for the role
    ``drafter``, what one contestant's model cost drafting statements (its attempts are
    its drafts)."""

    name: str
    role: Literal["contestant", "examiner", "drafter"]
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
    prices_source: str = ""
    """Where the prices came from: LiteLLM's table (its version) and bugbout's (its date)."""
    agents: list[CostRow] = Field(default_factory=list)
    cost: float | None = None
    """USD over every priced attempt; ``None`` when there is none."""
    unpriced: list[str] = Field(default_factory=list)
    """Models that reported token usage but have no price."""
    not_run: int = 0
    """Attempts ``run.budget`` kept from starting (to run next time)."""
    budget: str | None = None
    """Why they were not run: the limit reached and what was spent then."""


def costs(
    attempts: list[Attempt],
    agents: list[AgentRow],
    table: PriceTable,
    drafts: Sequence[Draft] = (),
) -> Costs:
    """Each agent's cost and, for contestants, cost and wall time per resolved bug; and
    a row per drafter of ``drafts`` (the drafts the bout's statements came from)."""
    rows: dict[tuple[str, str], CostRow] = {}
    unpriced: set[str] = set()
    budget = [reason for a in attempts if (reason := not_run_reason(a)) is not None]
    for attempt in sorted(attempts, key=lambda a: (a.role, a.contestant, a.round)):
        if not_run_reason(attempt) is not None:
            continue
        row = rows.setdefault(
            (attempt.role, attempt.contestant), CostRow(name=attempt.contestant, role=attempt.role)
        )
        row.wall_time += attempt.wall_time
        spent = bool(attempt.usage) or attempt.status not in RETRYABLE
        _charge(row, attempt.model, attempt.usage, spent, table, unpriced)
    for draft in drafts:
        name = draft.contestant or draft.drafter
        row = rows.setdefault(("drafter", name), CostRow(name=name, role="drafter"))
        _charge(row, draft.model or None, draft.usage, True, table, unpriced)
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
        prices_source=table.source,
        agents=list(rows.values()),
        cost=sum(known) if known else None,
        unpriced=sorted(unpriced),
        not_run=len(budget),
        budget=budget[0] if budget else None,
    )


def _charge(  # noqa: PLR0917 - one attempt's or draft's share of its row
    row: CostRow,
    model: str | None,
    usage: dict[str, int],
    spent: bool,
    table: PriceTable,
    unpriced: set[str],
) -> None:
    """Count one attempt (or draft) of ``model`` that took ``usage`` in ``row``, its cost
    at ``table``'s price; a model that reported usage without a price goes to
    ``unpriced``."""
    found = table.find(model)
    row.model, row.price = model, found[0] if found else None
    row.attempts += 1
    row.charged += spent
    if not usage:
        return
    row.reported += 1
    if found is None:
        unpriced.add(model or "(model not named)")
        return
    row.priced += 1
    row.cost = (row.cost or 0.0) + attempt_cost(usage, found[1])


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
