"""``bugbout run --dry-run``: what a bout would run and spend, before anything is spent.

Nothing runs: the tasks and ground truth are those already in the store (``bugbout
tasks`` makes them, without any agent), each (task, agent, repeat) is an attempt, found
in the store (reused, free) or to run; a contestant makes ``run.repeats`` attempts per
task, an examiner one. An attempt's cost is estimated from the tokens of the agent's past
attempts in the store, else from :data:`DEFAULT_USAGE` for its harness, at the price
table's price of its model. The smallest difference in resolve rate the bout
can detect is :func:`bugbout.core.report.power.detectable_difference` on its tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bugbout.core.pipeline import build_contestants
from bugbout.core.plumbing.models.prices import PriceTable, attempt_cost, price_table
from bugbout.core.race.contestants import Contestant, with_repeats
from bugbout.core.race.race import race_tasks, to_run
from bugbout.core.report.power import ALPHA, POWER, detectable_difference
from bugbout.core.store.race_records import Attempt
from bugbout.core.store.records import OracleSet, TaskSet
from bugbout.core.store.store import ORACLES, TASKS, Store, attempt_path
from bugbout.render.report_costs import fmt_usd

if TYPE_CHECKING:
    from bugbout.core.contract.manager import Plugins
    from bugbout.core.contract.settings import BoutSettings, BudgetSettings

DEFAULT_USAGE = {
    "claude-code": {"input_tokens": 60_000, "cache_read_tokens": 1_500_000,
                    "cache_write_tokens": 120_000, "output_tokens": 25_000},
    "codex": {"input_tokens": 250_000, "cache_read_tokens": 1_200_000, "output_tokens": 20_000},
    "gemini-cli": {"input_tokens": 600_000, "cache_read_tokens": 600_000, "output_tokens": 15_000},
    "mini-swe-agent": {"input_tokens": 500_000, "output_tokens": 12_000},
}  # fmt: skip
"""Tokens per attempt assumed for a harness whose agent has no past attempt in the store:
rough figures for one bug of a mid-sized Python repository (an agent reads much more
than it writes, most of it from the prompt cache). The ``command`` and ``predictions``
agents have none: their cost is unknown until they have run."""


@dataclass(frozen=True)
class Estimate:
    """One agent's attempts in the bout and what those to run may cost."""

    name: str
    role: str
    model: str | None
    attempts: int
    reused: int
    usage: dict[str, int] | None
    """Tokens per attempt, by kind (``None``: unknown)."""
    basis: str
    """Where ``usage`` comes from."""
    pending: tuple[str, ...]
    """The store paths of the attempts to run."""
    price: str | None
    """The price entry of its model (``None``: no price)."""
    per_attempt: float | None

    @property
    def to_run(self) -> int:
        return len(self.pending)

    @property
    def cost(self) -> float | None:
        return None if self.per_attempt is None else self.per_attempt * self.to_run


@dataclass(frozen=True)
class Plan:
    """What a bout would run: its tasks, each agent's attempts and their cost."""

    tasks: int
    mined: bool
    truth: bool
    """Whether the store has the tasks' ground truth (else scored tasks count)."""
    estimates: list[Estimate]
    rounds: int
    repeats: int
    """Attempts per (task, contestant): ``run.repeats``."""
    prices: str
    detectable: float | None
    budget: BudgetSettings

    @property
    def attempts(self) -> int:
        return sum(e.attempts for e in self.estimates)

    @property
    def reused(self) -> int:
        return sum(e.reused for e in self.estimates)

    @property
    def cost(self) -> float:
        """USD of the attempts to run whose cost is known."""
        return sum(e.cost or 0.0 for e in self.estimates)

    @property
    def runs(self) -> dict[str, float | None]:
        """Each attempt to run (its store path) and its estimated cost."""
        return {path: e.per_attempt for e in self.estimates for path in e.pending}

    def lines(self) -> list[str]:
        """The dry run, as the command line prints it."""
        if not self.mined:
            return [
                "dry run: no tasks in the store yet; `bugbout tasks` mines them and computes "
                "their ground truth (no agent runs), then `bugbout run --dry-run` counts them"
            ]
        contestants = sum(e.role == "contestant" for e in self.estimates)
        examiners = len(self.estimates) - contestants
        extra = f" + {examiners} examiner(s)" if examiners else ""
        agents = (
            f"{contestants} contestant(s){extra} x 1 repeat"
            if self.repeats == 1
            else f"({contestants} contestant(s) x {self.repeats} repeats{extra})"
        )
        lines = [
            f"dry run (nothing runs): {self.tasks} task(s) x {agents} = "
            f"{self.attempts} attempt(s); {self.reused} in the store (reused, free), "
            f"{self.attempts - self.reused} to run"
            + ("" if self.truth else " (ground truth not computed yet: scored tasks counted)"),
        ]
        for e in self.estimates:
            each = "cost unknown" if e.per_attempt is None else f"{fmt_usd(e.per_attempt)} each"
            tokens = f"{sum(e.usage.values()):,} tokens per attempt" if e.usage else "no tokens"
            lines.append(
                f"  {e.name} ({e.role}, {e.model or 'no model'}): {e.to_run} to run, "
                f"{e.reused} reused; {tokens} ({e.basis}), {each}"
                + ("" if e.cost is None else f", {fmt_usd(e.cost)} in all")
            )
        unknown = [e.name for e in self.estimates if e.cost is None and e.to_run]
        lines.append(
            f"estimated cost: {fmt_usd(self.cost)}"
            + (f" and unknown for {', '.join(unknown)}" if unknown else "")
            + (f", up to {self.rounds} times that with retry rounds" if self.rounds > 1 else "")
            + f" (prices: {self.prices})"
        )
        if budget := self._budget():
            lines.append(budget)
        lines.append(self._power())
        return lines

    def _budget(self) -> str | None:
        usd, tokens = self.budget.usd, self.budget.tokens
        if usd is None and tokens is None:
            return None
        limits = " and ".join(
            limit
            for limit in (
                f"run.budget.usd={usd:g}" if usd is not None else "",
                f"run.budget.tokens={tokens}" if tokens is not None else "",
            )
            if limit
        )
        over = (usd is not None and self.cost > usd) or (
            tokens is not None
            and sum(sum(e.usage.values()) * e.to_run for e in self.estimates if e.usage) > tokens
        )
        return f"budget: {limits}: " + (
            "the estimate is over it, so the race will stop starting attempts once it is "
            "spent; the next run runs the rest"
            if over
            else "the estimate is within it"
        )

    def _power(self) -> str:
        test = f"exact paired McNemar, {ALPHA:.0%}, {self.tasks} task(s)"
        if self.detectable is None:
            return (
                f"detectable difference: none at {POWER:.0%} power ({test}): too few tasks to "
                "tell two contestants apart; mine more (more tiers, miner=mutants, more "
                "repositories)"
            )
        return (
            f"detectable difference: {self.detectable:.0%} in resolve rate at {POWER:.0%} "
            f"power ({test}; outcomes taken as independent near 50%, an upper bound: agents "
            "that resolve the same bugs are told apart at less)"
        )


def plan(settings: BoutSettings, plugins: Plugins) -> Plan:
    """What ``bugbout run`` with ``settings`` would run and spend; runs nothing."""
    store = Store(settings.store_dir)
    tasks, oracles = store.read(TASKS, TaskSet), store.read(ORACLES, OracleSet)
    racers = build_contestants(settings, plugins)
    prices = price_table(settings.prices)
    if tasks is None:
        raced = []
    elif oracles is None:
        raced = [task for task in tasks.tasks if task.scored]
    else:
        raced = race_tasks(tasks, oracles)
    estimates = []
    for racer in racers:
        repeats = with_repeats([racer], settings.run.repeats)
        pending = tuple(
            again.path(task)
            for task in raced
            for again in repeats
            if to_run(store.read(again.path(task), Attempt), retry_failed=settings.run.retry_failed)
        )
        estimates.append(_estimate(store, racer, prices, len(raced) * len(repeats), pending))
    return Plan(
        tasks=len(raced),
        mined=tasks is not None,
        truth=oracles is not None,
        estimates=estimates,
        rounds=settings.run.rounds,
        repeats=settings.run.repeats,
        prices=prices.source,
        detectable=detectable_difference(len(raced)),
        budget=settings.run.budget,
    )


def _estimate(
    store: Store, racer: Contestant, prices: PriceTable, attempts: int, pending: tuple[str, ...]
) -> Estimate:
    agent = racer.agent
    usage, basis = past_usage(store, racer.name)
    if usage is None and (default := DEFAULT_USAGE.get(agent.harness)) is not None:
        usage, basis = default, f"the default for {agent.harness}"
    found = prices.find(agent.model)
    return Estimate(
        name=racer.name,
        role=racer.role,
        model=agent.model,
        attempts=attempts,
        reused=attempts - len(pending),
        usage=usage,
        basis=basis,
        pending=pending,
        price=found[0] if found else None,
        per_attempt=attempt_cost(usage, found[1]) if usage and found else None,
    )


def past_usage(store: Store, name: str) -> tuple[dict[str, int] | None, str]:
    """The mean tokens per attempt, by kind, of ``name``'s attempts in the store that
    reported usage (every task, key and round), and where that comes from."""
    found: list[dict[str, int]] = []
    for path in sorted(store.root.glob(attempt_path("*", name, "*"))):
        try:
            attempt = Attempt.model_validate_json(path.read_bytes())
        except (OSError, ValueError):
            continue
        if attempt.usage:
            found.append(attempt.usage)
    if not found:
        return None, "no past attempt with token usage"
    kinds = sorted({kind for usage in found for kind in usage})
    mean = {kind: round(sum(u.get(kind, 0) for u in found) / len(found)) for kind in kinds}
    return mean, f"mean of {len(found)} past attempt(s)"


def sweep_runs(plans: Sequence[Plan]) -> str:
    """The line a sweep prints before its first job: the agent runs its jobs will make
    (an attempt two jobs share runs once) and their estimated cost."""
    runs = {path: cost for p in plans for path, cost in p.runs.items()}
    unknown = sum(cost is None for cost in runs.values())
    return (
        f"sweep: {len(plans)} job(s) will make {len(runs)} agent run(s), about "
        f"{fmt_usd(sum(cost or 0.0 for cost in runs.values()))}"
        + (f" ({unknown} of unknown cost)" if unknown else "")
        + "; `bugbout run --dry-run` with a job's overrides details one"
    )
