"""The ``mutants`` miner: bugs injected into the current code, each a task when the
project's own tests catch it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from bugbout.miners import ConfigError, MinerPlugin, MutantOptions, hookimpl

if TYPE_CHECKING:
    from bugbout.miners import MiningRequest, Progress, SuiteRunner, TaskSet, TitleLookup


@hookimpl
def bugbout_miners() -> Iterator[MinerPlugin]:
    yield MinerPlugin(
        name="mutants",
        factory=MutantsMiner,
        options=MutantOptions,
        description="bugs injected into the current code that the project's tests catch",
    )


class MutantsMiner:
    """Mutates the functions the tests run and keeps the mutants they catch."""

    def __init__(self, options: MutantOptions | None = None) -> None:
        self.options = options or MutantOptions()

    def mine(self, request: MiningRequest, titles: TitleLookup | None = None) -> TaskSet:
        raise ConfigError(
            "miner=mutants runs the project's tests: run it through `bugbout tasks`, "
            "which gives it the bout's test environment"
        )

    def mine_tested(
        self, request: MiningRequest, runner: SuiteRunner, progress: Progress
    ) -> TaskSet:
        from bugbout.miners import mine_mutants

        return mine_mutants(request, self.options, runner, progress)
