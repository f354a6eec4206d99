"""The Python API: a bout from code, with the same settings the command line composes.

Example::

    from bugbout import Bout, Project

    result = Bout(Project.load("."), contestants=[MyAgent("my-model")]).run()
    for attempt in result.attempts:
        print(attempt.task_id, attempt.contestant, attempt.status)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bugbout.core.agents import CodingAgent
from bugbout.core.errors import BugboutError
from bugbout.core.manager import Plugins
from bugbout.core.progress import Progress
from bugbout.core.race import Contestant, Race, attempt_path, build_contestants
from bugbout.core.records import Attempt, OracleSet, TaskSet
from bugbout.core.report import Report
from bugbout.core.rounds import run_rounds
from bugbout.core.settings import BoutSettings
from bugbout.core.store import Store
from bugbout.core.tasks import check_plugins, compute_oracles, mine_tasks
from bugbout.core.verdicts import Verdicts, check_verdict_plugins, load_report, write_reports


@dataclass
class Project:
    """A repository and its settings (``bugbout.yaml`` with bugbout's defaults)."""

    settings: BoutSettings
    plugins: Plugins

    @classmethod
    def load(cls, path: str | Path = ".", overrides: Sequence[str] = ()) -> Project:
        """The project whose ``bugbout.yaml`` is at or above ``path``; ``overrides`` are
        the command line's (``["tasks.limit=5", "env=interpreter"]``)."""
        from bugbout.cli import compose_settings  # Hydra stays out of the core

        settings, plugins = compose_settings(Path(path), overrides)
        return cls(settings, plugins)

    @property
    def store(self) -> Store:
        return Store(self.settings.store_dir)


@dataclass
class BoutResult:
    """What a bout produced: the tasks, their ground truth and every contestant's attempt."""

    tasks: TaskSet
    oracles: OracleSet
    attempts: list[Attempt] = field(default_factory=list)
    report: Report | None = None


class Bout:
    """Mine the project's tasks, compute their ground truth and race the contestants.

    ``contestants`` are adapters (:class:`bugbout.CodingAgent` instances); without them
    the project's configured contestants race.
    """

    def __init__(
        self,
        project: Project,
        contestants: Sequence[CodingAgent] | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.project = project
        self.progress = progress
        settings, plugins = project.settings, project.plugins
        if contestants is None:
            self.contestants = build_contestants(settings, plugins)
        else:
            self.contestants = [Contestant(agent.name, agent) for agent in contestants]

    @classmethod
    def load(cls, path: str | Path = ".") -> Bout:
        return cls(Project.load(path))

    def run(self) -> BoutResult:
        """Run the bout (resumable: finished attempts are never run again)."""
        settings, plugins = self.project.settings, self.project.plugins
        check_plugins(settings, plugins)
        store = self.project.store
        check_verdict_plugins(settings, plugins)
        with store.lock():
            tasks = mine_tasks(settings, plugins, store, self.progress)
            oracles = compute_oracles(settings, plugins, store, tasks, self.progress)
            race = Race(settings, plugins, store, self.progress)
            verdicts = Verdicts(settings, plugins, store, race, self.progress)
            race.run(tasks, oracles, self.contestants)
            if settings.run.rounds > 1:
                run_rounds(race, verdicts.auditor, tasks, oracles, self.contestants)
            verdicts.run(tasks, oracles, self.contestants)
            report = load_report(store)
            write_reports(
                report, store, plugins, tuple(r for r in settings.reporters if r != "terminal")
            )
        attempts = [
            attempt
            for task in tasks.tasks
            for contestant in self.contestants
            if (attempt := store.read(attempt_path(task.id, contestant.name), Attempt))
        ]
        return BoutResult(tasks, oracles, attempts, report)


def render_markdown(result: BoutResult | Report) -> str:
    """The bout's report as Markdown (what ``report.md`` holds)."""
    from bugbout.plugins.reporters.markdown import render_markdown as render

    report = result.report if isinstance(result, BoutResult) else result
    if report is None:
        raise BugboutError("this result has no report: run the bout to the end first")
    return render(report)
