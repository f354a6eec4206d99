"""The contestants, the race and the stages after it, wired: their specs and plugins made
from the bout's settings and the plugin manager. A stage's records are keyed from its
spec and its inputs' keys where the stage keeps them
(:class:`bugbout.core.evidence.EvidenceKeys` for the evidence after the race)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bugbout.core.audit.auditing import Auditor
from bugbout.core.contract.instances import Instance
from bugbout.core.contract.manager import Plugins, make_plugins
from bugbout.core.contract.settings import BoutSettings, PluginChoice
from bugbout.core.contract.types import AgentPlugin, AssignmentPlugin, AuditorPlugin, JudgePlugin
from bugbout.core.evidence import EvidenceSpec
from bugbout.core.pipeline.report import make_reporters
from bugbout.core.plumbing.runtime.executor import Executor, make_executor
from bugbout.core.plumbing.runtime.progress import Progress
from bugbout.core.plumbing.runtime.stopping import Stop
from bugbout.core.plumbing.tools import Benches, BenchSpec
from bugbout.core.race.agents import CodingAgent
from bugbout.core.race.contestants import Contestant, ContestantsSpec, make_contestants
from bugbout.core.race.examining import Assignment
from bugbout.core.race.race import Race
from bugbout.core.race.spec import AttemptSpec, RacePlugins, RaceSpec
from bugbout.core.store.store import Store
from bugbout.core.verdicts import Verdicts, VerdictsPlugins, VerdictsSpec


def contestants_spec(settings: BoutSettings) -> ContestantsSpec:
    """What the making of the contestants reads of ``settings``: the agents chosen, by
    role, and the names ``contestants:`` and ``examiners:`` define."""
    roles = ("contestant", "examiner")
    return ContestantsSpec(
        chosen={role: settings.chosen(role) for role in roles},
        defined={role: frozenset(getattr(settings, f"{role}s")) for role in roles},
    )


@dataclass(frozen=True)
class EntryPlugins:
    """An entry's agent and assignment, made by the plugin manager."""

    plugins: Plugins

    def agent(self, entry: Instance) -> CodingAgent:
        """The agent ``entry`` names, with its validated options."""
        return entry.build(self.plugins, AgentPlugin)

    def assignment(self, entry: Instance) -> tuple[Assignment, dict[str, Any]]:
        """The assignment ``entry`` names, and its options that differ from the defaults."""
        changed = entry.check(self.plugins, AssignmentPlugin).model_dump(
            mode="json", by_alias=True, exclude_defaults=True
        )
        return entry.build(self.plugins, AssignmentPlugin), changed


def build_contestants(settings: BoutSettings, plugins: Plugins) -> list[Contestant]:
    """The bout's contestants and examiners, each with its agent made by ``plugins``."""
    return make_contestants(contestants_spec(settings), EntryPlugins(plugins))


def attempt_spec(settings: BoutSettings) -> AttemptSpec:
    """What an attempt reads of ``settings``: its bench's sections, ``run:``, ``limits:``
    and ``tasks:``."""
    return AttemptSpec(BenchSpec.of(settings), settings.run, settings.limits, settings.tasks)


def race_spec(settings: BoutSettings) -> RaceSpec:
    """What the race reads of ``settings``: what its attempts read and the prices."""
    return RaceSpec(attempt_spec(settings), settings.prices)


def race_plugins(settings: BoutSettings, plugins: Plugins, benches: Benches) -> RacePlugins:
    """The plugin implementations the race uses: ``benches``, the transcript readers, the
    executor ``settings`` choose, and how a remote attempt rebuilds them."""
    return RacePlugins(
        benches=benches,
        transcript=plugins.hook.bugbout_transcript,
        executor=lambda: make_executor(settings, plugins),
        remote=WorkerRace(attempt_spec(settings)),
        notify=plugins.notify,
    )


def race(
    settings: BoutSettings,
    plugins: Plugins,
    benches: Benches,
    progress: Progress | None = None,
    *,
    executor: Executor | None = None,
    stop: Stop | None = None,
) -> Race:
    """The race, given its spec and the plugins it uses (:func:`race_plugins`)."""
    used = race_plugins(settings, plugins, benches)
    return Race(race_spec(settings), used, progress, executor=executor, stop=stop)


def verdicts_spec(settings: BoutSettings) -> VerdictsSpec:
    """What cross-examination, judging, scoring and auditing read of ``settings``."""
    evidence = EvidenceSpec(
        verdicts=settings.verdicts,
        auditor=settings.auditor,
        sandbox=settings.sandbox,
        test_limits=settings.limits.tests,
    )
    return VerdictsSpec(
        evidence=evidence,
        policy=settings.judge.name,
        jobs=settings.tasks.jobs,
        repeats=settings.run.repeats,
        repository=settings.repository,
    )


def check_verdict_plugins(settings: BoutSettings, plugins: Plugins) -> None:
    """Fail before any work when the judge, auditor or a reporter is unknown or misconfigured."""
    plugins.get(JudgePlugin, settings.judge.name).spec.parse_options(settings.judge.options)
    plugins.get(AuditorPlugin, settings.auditor.name).spec.parse_options(settings.auditor.options)
    make_reporters(settings, plugins)


def make_auditor(plugins: Plugins, auditor: PluginChoice) -> Auditor:
    """The auditor ``auditor`` chooses, made by ``plugins``."""
    return plugins.create(AuditorPlugin, auditor.name, auditor.options)


def verdicts(
    settings: BoutSettings,
    plugins: Plugins,
    tools: Benches,
    progress: Progress | None = None,
    *,
    output: Store | None = None,
    executor: Executor | None = None,
) -> Verdicts:
    """The stages after the race, given their spec and the plugins they use: the judge
    and auditor ``settings`` choose, ``tools``' benches, the executor (``executor``, or
    the settings' own), and how a remote job rebuilds its benches and auditor."""
    judge = settings.judge
    used = VerdictsPlugins(
        judge=plugins.create(JudgePlugin, judge.name, judge.options),
        judged_by=plugins.get(JudgePlugin, judge.name).distribution,
        auditor=make_auditor(plugins, settings.auditor),
        benches=tools,
        executor=lambda: make_executor(settings, plugins),
        remote=WorkerBenches(BenchSpec.of(settings), settings.auditor),
        notify=plugins.notify,
    )
    spec = verdicts_spec(settings)
    return Verdicts(spec, used, tools.store, progress, output=output, executor=executor)


@dataclass(frozen=True)
class WorkerBenches:
    """A remote evidence job's benches and auditor, rebuilt in its worker from their specs
    and the plugins installed there: the worker must see the repository, the store and
    ``BUGBOUT_HOME`` at the same paths."""

    bench: BenchSpec
    auditor: PluginChoice

    def __call__(self) -> tuple[Benches, Auditor]:
        plugins = make_plugins()
        benches = Benches.make(self.bench, plugins, Store(self.bench.store_dir))
        return benches, make_auditor(plugins, self.auditor)


@dataclass(frozen=True)
class WorkerRace:
    """A remote attempt's race plugins, rebuilt in its worker from its spec and the
    plugins installed there: the worker must see the repository, the store and
    ``BUGBOUT_HOME`` at the same paths."""

    spec: AttemptSpec

    def __call__(self) -> RacePlugins:
        plugins = make_plugins()
        bench = self.spec.bench
        benches = Benches.make(bench, plugins, Store(bench.store_dir))
        default = BoutSettings(project=bench.project, root=bench.root)  # its executor's
        return RacePlugins(
            benches=benches,
            transcript=plugins.hook.bugbout_transcript,
            executor=lambda: make_executor(default, plugins),
            remote=self,
            notify=plugins.notify,
        )
