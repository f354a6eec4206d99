"""A bout's budget (``run.budget``): what the attempts one run starts may spend, in USD
at the price table's prices and in tokens. Once either is reached no attempt starts:
those running finish, those left are recorded as not run (``interrupted``, with
:data:`NOT_RUN` first in their error), and the next run runs them, within its own
budget. Attempts found in the store cost nothing."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

from bugbout.core.contract.settings import BudgetSettings, PriceSettings
from bugbout.core.plumbing.models.prices import PriceTable, attempt_cost, price_table
from bugbout.core.plumbing.runtime.executor import Executor
from bugbout.core.plumbing.runtime.stopping import Interrupted
from bugbout.core.store.race_records import Attempt

NOT_RUN = "not run: the budget"
"""How the error of an attempt the budget kept from starting begins."""

R = TypeVar("R")


def not_run_reason(attempt: Attempt) -> str | None:
    """Why the budget kept ``attempt`` from starting (the limit reached and what was spent
    then, as :meth:`Budget.not_run` recorded it), or ``None`` when it did not."""
    error = attempt.error or ""
    if not error.startswith(NOT_RUN):
        return None
    return error.removeprefix(NOT_RUN).split(";", 1)[0].strip()


class OverBudget(Interrupted):
    """The budget is spent: no attempt starts."""


class Budget:
    """What this run's attempts spent, against ``run.budget``; thread-safe."""

    def __init__(self, settings: BudgetSettings, prices: dict[str, PriceSettings]) -> None:
        self.settings = settings
        self._prices = prices
        self._table: PriceTable | None = None
        self._lock = threading.Lock()
        self.usd = 0.0
        """USD the priced attempts spent."""
        self.tokens = 0
        """Tokens of every kind the attempts reported."""

    @property
    def limited(self) -> bool:
        return self.settings.usd is not None or self.settings.tokens is not None

    def add(self, attempt: Attempt) -> None:
        """Count an attempt this run ran."""
        if not self.limited or not attempt.usage:
            return
        with self._lock:  # the table is read once, by the first attempt to need it
            self._table = self._table or price_table(self._prices)
            found = self._table.find(attempt.model)
            self.tokens += sum(attempt.usage.values())
            if found is not None:
                self.usd += attempt_cost(attempt.usage, found[1])

    def reached(self) -> str | None:
        """Which limit is reached and what was spent (one line), or ``None``."""
        usd, tokens = self.settings.usd, self.settings.tokens
        with self._lock:
            spent = f"${self.usd:,.2f} and {self.tokens:,} tokens spent"
            if usd is not None and self.usd >= usd:
                return f"run.budget.usd={usd:g} reached ({spent})"
            if tokens is not None and self.tokens >= tokens:
                return f"run.budget.tokens={tokens} reached ({spent})"
        return None

    def check(self) -> None:
        """Raise :class:`OverBudget` once the budget is reached."""
        if (reached := self.reached()) is not None:
            raise OverBudget(reached)

    def not_run(self, reason: str) -> str:
        """The error recorded for an attempt the budget kept from starting."""
        return f"{NOT_RUN} {reason}; `bugbout run` again, with a higher budget, runs it"

    def executor(self, executor: Executor) -> BudgetExecutor:
        """``executor``, starting nothing once the budget is reached."""
        return BudgetExecutor(executor, self)


class BudgetExecutor:
    """An executor whose ``submit`` raises :class:`OverBudget` once the budget is reached
    (so :func:`~bugbout.core.plumbing.runtime.executor.run_jobs` submits nothing more)."""

    def __init__(self, inner: Executor, budget: Budget) -> None:
        self.inner = inner
        self.budget = budget
        self.name = inner.name
        self.in_process = inner.in_process

    def problem(self) -> str | None:
        return self.inner.problem()

    def submit(self, job: Callable[[], R]) -> Future[R]:
        self.budget.check()
        return self.inner.submit(job)

    def close(self) -> None:
        self.inner.close()
