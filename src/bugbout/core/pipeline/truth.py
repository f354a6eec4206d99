"""Ground truth, wired: the tasks mined (:mod:`bugbout.core.pipeline.mining`), then their
oracles computed (:func:`bugbout.core.tasks.compute_oracles`), one bout at a time on a
store."""

from __future__ import annotations

from pathlib import Path

from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings
from bugbout.core.contract.types import (
    AgentPlugin,
    EnvironmentPlugin,
    IssueSourcePlugin,
    MinerPlugin,
    SandboxPlugin,
)
from bugbout.core.mine.drafting import Drafter
from bugbout.core.mine.finding import claimed, party_of
from bugbout.core.pipeline.mining import mine_spec, mine_tasks
from bugbout.core.plumbing.environments.environment import revision
from bugbout.core.plumbing.runtime.executor import Executor, make_executor
from bugbout.core.plumbing.runtime.progress import Progress, SilentProgress
from bugbout.core.plumbing.tools import Benches, BenchSpec
from bugbout.core.store.records import OracleSet, TaskSet
from bugbout.core.store.store import ORACLES, Store
from bugbout.core.tasks import TruthPlugins, TruthSpec, compute_truth


def check_plugins(settings: BoutSettings, plugins: Plugins) -> None:
    """Fail before any work when a selected plugin is missing or its options are wrong."""
    plugins.get(MinerPlugin, settings.miner.name).spec.parse_options(settings.miner.options)
    plugins.get(EnvironmentPlugin, settings.environment.name).spec.parse_options(
        settings.environment.options
    )
    plugins.get(SandboxPlugin, settings.sandbox.name).spec.parse_options(settings.sandbox.options)
    for source in mine_spec(settings).sources():
        source.check(plugins, IssueSourcePlugin)
    if settings.tasks.statement == "drafted":
        make_drafter(settings, plugins)


def make_drafter(settings: BoutSettings, plugins: Plugins) -> Drafter:
    """The drafter ``tasks.drafter`` names, its options checked by its agent plugin."""
    return Drafter.of(
        settings.tasks.drafter, settings.contestants, settings.contestant,
        lambda given: given.check(plugins, AgentPlugin),
    )  # fmt: skip


def truth_spec(settings: BoutSettings) -> TruthSpec:
    """What ground truth reads of ``settings``."""
    return TruthSpec(BenchSpec.of(settings), settings.tasks)


def truth_plugins(settings: BoutSettings, plugins: Plugins, store: Store) -> TruthPlugins:
    """The plugin implementations ground truth uses, made by ``plugins``: the benches on
    ``store`` and the executor ``settings`` choose, the environment builder's revision,
    and the drafter ``tasks.drafter`` names when statements are drafted."""
    environment = plugins.get(EnvironmentPlugin, settings.environment.name)
    drafted = settings.tasks.statement == "drafted"
    return TruthPlugins(
        benches=lambda: Benches.make(BenchSpec.of(settings), plugins, store),
        built_by=revision(environment.spec.factory),
        executor=lambda: make_executor(settings, plugins),
        drafter=lambda: make_drafter(settings, plugins) if drafted else None,
        notify=plugins.notify,
        problems=plugins.problems,
    )


def compute_oracles(
    settings: BoutSettings,
    plugins: Plugins,
    store: Store,
    tasks: TaskSet,
    progress: Progress | None = None,
    *,
    executor: Executor | None = None,
    sweep: str = "",
    computed: set[str] | None = None,
) -> OracleSet:
    """Ground truth (:func:`bugbout.core.tasks.compute_truth`) given its spec and plugins."""
    used = truth_plugins(settings, plugins, store)
    return compute_truth(
        truth_spec(settings), used, store, tasks, progress,
        executor=executor, sweep=sweep, computed=computed,
    )  # fmt: skip


def ground_truth(
    settings: BoutSettings,
    plugins: Plugins,
    store: Store,
    progress: Progress | None = None,
    *,
    executor: Executor | None = None,
    sweep: Path | None = None,
    mine_only: bool = False,
    computed: set[str] | None = None,
) -> tuple[TaskSet, OracleSet]:
    """Mine the tasks and compute their oracles (``mine_only``: only mine; the oracles
    are those stored), one bout at a time on a store: another bugbout doing it
    meanwhile is an error naming it, except for the jobs of one ``sweep`` (its
    directory), which take turns: the first computes, the others find its records and
    reuse them (an environment error too). ``computed`` receives the id of each task
    whose oracle was computed now."""
    progress = progress or SilentProgress()
    with claimed(store, progress, sweep):
        tasks = mine_tasks(settings, plugins, store, progress)
        if mine_only:
            return tasks, store.read(ORACLES, OracleSet) or OracleSet()
        oracles = compute_oracles(
            settings, plugins, store, tasks, progress,
            executor=executor, sweep=party_of(sweep), computed=computed,
        )  # fmt: skip
    return tasks, oracles
