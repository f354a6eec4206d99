"""What the race takes: its spec (the sections of the bout's settings it reads) and the
plugin implementations it uses, made by :mod:`bugbout.core.pipeline`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from bugbout.core.contract.settings import (
    LimitsSettings,
    PriceSettings,
    RunSettings,
    TasksSettings,
)
from bugbout.core.contract.transcript import TranscriptReader
from bugbout.core.plumbing.runtime.executor import Executor
from bugbout.core.plumbing.tools import Benches, BenchSpec


@dataclass(frozen=True)
class AttemptSpec:
    """What an attempt reads of the bout's settings: what its bench is made from,
    ``run:``, ``limits:`` and ``tasks:`` (the timeout of its tests' runs); not the other
    contestants, the prices or the reporters."""

    bench: BenchSpec
    run: RunSettings
    limits: LimitsSettings
    tasks: TasksSettings


@dataclass(frozen=True)
class RaceSpec:
    """What the race reads of the bout's settings: what each attempt reads, and the
    ``prices:`` its budget counts spending in (none in a remote attempt's race, which
    spends against no budget)."""

    attempt: AttemptSpec
    prices: dict[str, PriceSettings] = field(default_factory=dict)

    @property
    def run(self) -> RunSettings:
        """``run:``, as each attempt reads it."""
        return self.attempt.run


class RaceSource(Protocol):
    """How a remote attempt gets the race's plugins: rebuilt in its worker from the spec
    it ships (picklable)."""

    def __call__(self) -> RacePlugins: ...


@dataclass(frozen=True)
class RacePlugins:
    """The plugin implementations the race uses: the benches its attempts are made on (the
    sandbox, test environments and runner), how an agent's transcript is read, the
    executor its attempts go to (made when a race needs one), how an attempt sent to
    another process rebuilds these (``remote``), and the lifecycle hooks (``notify``).
    The agents come with the contestants."""

    benches: Benches
    transcript: TranscriptReader
    executor: Callable[[], Executor]
    remote: RaceSource
    notify: Callable[..., None]
