"""Mining, wired: its spec and plugins made from the bout's settings and the plugin
manager, and the mining run on them. It imports only what mining needs (``bugbout tasks
--mine-only`` runs it)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bugbout.core.contract.errors import BugboutError
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings
from bugbout.core.contract.types import IssueSourcePlugin, MinerPlugin, TestRunnerPlugin
from bugbout.core.mine.finding import claimed, mine
from bugbout.core.mine.issues import IssueResolver, IssueSource
from bugbout.core.mine.spec import MinePlugins, MineSpec
from bugbout.core.plumbing.runtime.progress import Progress, SilentProgress
from bugbout.core.store.records import TaskSet
from bugbout.core.store.store import Store

if TYPE_CHECKING:
    from bugbout.core.mine.injection import SuiteRunner


def mine_spec(settings: BoutSettings) -> MineSpec:
    """What mining reads of ``settings``."""
    return MineSpec(
        repository=settings.repository,
        project=settings.project,
        miner=settings.miner,
        issue_sources=settings.issue_sources,
        test_runner=settings.test_runner,
    )


def mine_plugins(settings: BoutSettings, plugins: Plugins) -> MinePlugins:
    """The plugin implementations mining uses, made by ``plugins``: the miner now, the
    issue sources, the test runner and a suite runner when mining asks for them."""
    spec = mine_spec(settings)
    choice = settings.miner
    miner = plugins.get(MinerPlugin, choice.name)
    reads = miner.spec.parse_options(dict(choice.options)).model_dump_json()
    sources = [plugins.get(IssueSourcePlugin, s.plugin).distribution for s in spec.sources()]
    runner = settings.test_runner
    return MinePlugins(
        miner=plugins.create(MinerPlugin, choice.name, choice.options),
        sources=lambda: issue_sources(spec, plugins),
        runner=lambda: plugins.create(TestRunnerPlugin, runner.name, runner.options),
        suite=lambda: suite_runner(settings, plugins),
        made_by=(reads, miner.distribution, *sources),
        notify=plugins.notify,
        problems=plugins.problems,
    )


def issue_sources(spec: MineSpec, plugins: Plugins) -> list[tuple[str, IssueSource]]:
    """The issue sources ``spec`` configures, each by its entry's name, in order."""
    return [(source.name, source.build(plugins, IssueSourcePlugin)) for source in spec.sources()]


def issue_resolver(settings: BoutSettings, plugins: Plugins, progress: Progress) -> IssueResolver:
    """The configured issue sources, asked in order, each by its entry's name."""
    return IssueResolver(issue_sources(mine_spec(settings), plugins), warn=progress.warn)


def suite_runner(settings: BoutSettings, plugins: Plugins) -> SuiteRunner:
    """What a miner that runs the suite is given: the bout's environment builder and its
    tests' confinement (:class:`~bugbout.core.plumbing.tools.Tools`), ``tasks.timeout``."""
    from bugbout.core.mine.injection import SuiteRunner
    from bugbout.core.plumbing.tools import Tools

    tools = Tools.build(settings, plugins, Store(settings.store_dir))
    problem = tools.sandbox.problem()
    if problem:
        raise BugboutError(f"tests cannot run confined: {problem}")
    builder = tools.environments.builder
    return SuiteRunner(builder, settings.project, tools.home, tools.confine, settings.tasks.timeout)


def mine_tasks(
    settings: BoutSettings, plugins: Plugins, store: Store, progress: Progress | None = None
) -> TaskSet:
    """Mining (:func:`bugbout.core.mine.finding.mine`) given its spec and plugins."""
    return mine(mine_spec(settings), mine_plugins(settings, plugins), store, progress)


def find_tasks(
    settings: BoutSettings,
    plugins: Plugins,
    store: Store,
    progress: Progress | None = None,
    *,
    sweep: Path | None = None,
) -> TaskSet:
    """:func:`mine_tasks` under the store's claim
    (:func:`bugbout.core.mine.finding.claimed`)."""
    progress = progress or SilentProgress()
    with claimed(store, progress, sweep):
        return mine_tasks(settings, plugins, store, progress)
