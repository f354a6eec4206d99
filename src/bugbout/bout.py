"""The Python API: a bout from code, with the same settings the command line composes.

Example::

    from bugbout import Bout, Project

    result = Bout(Project.load("."), contestants=[MyAgent("my-model")]).run()
    for attempt in result.attempts:
        print(attempt.task_id, attempt.contestant, attempt.status)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from bugbout.core import pipeline
from bugbout.core.contract.errors import BugboutError, ConfigError
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings
from bugbout.core.pipeline import (
    build_contestants,
    check_plugins,
    check_verdict_plugins,
    ground_truth,
    verdicts,
)
from bugbout.core.plumbing.runtime.executor import make_executor
from bugbout.core.plumbing.runtime.progress import LoggedProgress, Progress, ProgressEvent
from bugbout.core.plumbing.runtime.stopping import Stop
from bugbout.core.plumbing.tools import Tools
from bugbout.core.race.agents import CodingAgent
from bugbout.core.race.contestants import Contestant
from bugbout.core.report.costs import price_table
from bugbout.core.report.report import Report
from bugbout.core.report.report_store import load_report
from bugbout.core.report.reporters import write_reports
from bugbout.core.report.unscored import too_many
from bugbout.core.rounds import run_rounds
from bugbout.core.store.race_records import Attempt
from bugbout.core.store.records import OracleSet, TaskSet
from bugbout.core.store.store import JOB, Store
from bugbout.core.store.verdict_records import Job


@dataclass
class Project:
    """A repository and its settings (``bugbout.yaml`` with bugbout's defaults)."""

    settings: BoutSettings
    plugins: Plugins

    @classmethod
    def load(cls, path: str | Path = ".", overrides: Sequence[str] = ()) -> Project:
        """The project whose ``bugbout.yaml`` is at or above ``path``; ``overrides`` are
        the command line's (``["miner.limit=5", "environment=interpreter"]``)."""
        from bugbout.config.adapter import compose_settings  # Hydra stays out of the core

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
    job: Job | None = None
    """Which attempts the bout ran and which it found in the store."""
    ran: list[Attempt] = field(default_factory=list)
    """The attempts run now (every round), the others were reused."""
    printed: dict[str, str] = field(default_factory=dict)
    """Renderings of the reporters that print rather than write (``terminal``), by name."""
    written: list[str] = field(default_factory=list)
    """The report files written in the bout's output (``report.html``, ...)."""


class UnscoredBout(BugboutError):
    """More of the bout's attempts were left unscored than ``run.max-unscored`` allows:
    its report is written (``result``), and the bout fails with one line saying why."""

    def __init__(self, message: str, result: BoutResult) -> None:
        super().__init__(message)
        self.result = result


class Bout:
    """Mine the project's tasks, compute their ground truth and race the contestants.

    ``contestants`` are adapters (:class:`bugbout.CodingAgent` instances); without them
    the project's configured contestants race. The bout's verdicts, reports and
    ``job.json`` go to ``output`` (default: the store itself), with ``bout.log``: what the
    bout told through the ``bugbout`` logger (which an application may route too);
    ``progress`` is a :class:`Progress` or a callback taking each
    :class:`~bugbout.core.plumbing.runtime.progress.ProgressEvent`. Tasks, ground truth and
    attempts are shared by every bout on the store, and reused whenever they are keyed
    alike. ``overrides`` are recorded in ``job.json`` (a sweep job's choices). The jobs of
    one ``sweep`` (its directory) wait for each other's ground truth; any other bout
    mining or computing it on the store meanwhile is an error.
    """

    def __init__(
        self,
        project: Project | str | Path,
        contestants: Sequence[CodingAgent] | None = None,
        progress: Progress | Callable[[ProgressEvent], None] | None = None,
        output: str | Path | None = None,
        overrides: Sequence[str] = (),
        *,
        sweep: str | Path | None = None,
    ) -> None:
        if not isinstance(project, Project):
            project = Project.load(project)
        self.project = project
        self.progress = _logged_progress(progress)
        self.output = Store(Path(output)) if output else project.store
        self.overrides = list(overrides)
        self.sweep = Path(sweep) if sweep is not None else None
        settings, plugins = project.settings, project.plugins
        if contestants is None:
            self.contestants = build_contestants(settings, plugins)
        else:
            self.contestants = [Contestant(agent.name, agent) for agent in contestants]

    @classmethod
    def load(cls, path: str | Path = ".") -> Bout:
        return cls(Project.load(path))

    def run(self) -> BoutResult:
        """Run the bout (resumable: finished attempts are never run again).

        In the main thread, Ctrl-C (SIGINT) or SIGTERM stops it: nothing new starts, what
        runs gets ``run.grace`` seconds (a second signal: none) before it is killed, and
        :class:`~bugbout.core.plumbing.runtime.stopping.Interrupted` (a ``KeyboardInterrupt``) is
        raised."""
        settings, plugins = self.project.settings, self.project.plugins
        check_plugins(settings, plugins)
        self._check_contestants()
        store, output = self.project.store, self.output
        check_verdict_plugins(settings, plugins)
        for where in {store.root: store, output.root: output}.values():
            where.check_writable()  # not after the whole bout: before it spends anything
        clock, started = time.monotonic(), datetime.now(UTC).isoformat(timespec="seconds")
        progress = self.progress
        stop = Stop(settings.run.grace, progress.warn)
        with (
            _logged(output.root / LOG, progress),
            stop.installed(),
            output.lock(progress.warn),
            closing(make_executor(settings, plugins)) as executor,
        ):
            tasks_executor = stop.executor(executor, "task")
            computed: set[str] = set()
            tasks, oracles = ground_truth(
                settings, plugins, store, progress,
                executor=tasks_executor, sweep=self.sweep, computed=computed,
            )  # fmt: skip
            tools = Tools.build(settings, plugins, store)
            race = pipeline.race(
                settings, plugins, tools, self.progress, executor=executor, stop=stop
            )
            after_race = verdicts(
                settings, plugins, tools, self.progress, output=output, executor=tasks_executor
            )
            ran = race.run(tasks, oracles, self.contestants)
            stop.check()
            if settings.run.rounds > 1:
                ran += run_rounds(race, after_race.auditor, tasks, oracles, self.contestants)
                stop.check()
            job = Job(
                overrides=self.overrides,
                judge=settings.judge.name,
                auditor=settings.auditor.name,
                contestants=[c.name for c in self.contestants if c.role == "contestant"],
                examiners=[c.name for c in self.contestants if c.role == "examiner"],
                cutoffs={c.name: c.cutoff for c in self.contestants if c.cutoff is not None},
                tasks=tasks,
                attempts=race.job_attempts(tasks, oracles, self.contestants),
                started=started,
                truths_made=len(computed),
                truths_reused=sum(
                    task.id in oracles.root and task.id not in computed for task in tasks.tasks
                ),
            )
            earlier = _earlier_reports(output)
            output.write(JOB, job)
            after_race.run(tasks, oracles, self.contestants)
            stop.check()
            reporting = pipeline.report_plugins(settings, plugins)
            report = load_report(
                store,
                output,
                price_table(settings.prices),
                repository=settings.repository,
                transcript=reporting.transcript,
            )
            written = write_reports(report, output, reporting)
            for stale in set(earlier) - set(written.files):
                output.path(stale).unlink(missing_ok=True)
            job = job.model_copy(
                update={
                    "wall_time": round(time.monotonic() - clock, 3),
                    "evidence_made": after_race.runs_made,
                    "evidence_reused": after_race.runs_reused,
                    "reports": written.files,
                }
            )
            output.write(JOB, job)
        attempts = [attempt for used in job.attempts if (attempt := store.read(used.path, Attempt))]
        result = BoutResult(
            tasks, oracles, attempts, report, job, ran, written.printed, written.files
        )
        if failed := too_many(report.unscored, settings.run.max_unscored):
            raise UnscoredBout(failed, result)
        return result

    def _check_contestants(self) -> None:
        """Stop before any work when a contestant cannot race here; with
        ``run.keep-going``, warn and race the others."""
        from bugbout.onboarding.readiness import unready

        problems = unready(self.contestants)
        if not problems:
            return
        if not self.project.settings.run.keep_going:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            first = next(iter(problems.values()))
            raise ConfigError(f"{first}{more}; or pass --keep-going to race the others")
        for reason in problems.values():
            self.progress.warn(f"{reason}; it does not race")
        self.contestants = [c for c in self.contestants if c.name not in problems]


def _logged_progress(given: Progress | Callable[[ProgressEvent], None] | None) -> LoggedProgress:
    """``given`` (a :class:`Progress`, a callback, or nothing) behind the bout's logger."""
    if isinstance(given, LoggedProgress):
        return given
    if given is None:
        return LoggedProgress()
    if hasattr(given, "advance"):
        return LoggedProgress(cast(Progress, given))
    return LoggedProgress(callback=given)


LOG = "bout.log"
"""The bout's log, in its output."""


@contextmanager
def _logged(path: Path, progress: LoggedProgress) -> Iterator[None]:
    """What ``progress`` tells at INFO and above also written to ``path`` while the bout
    runs (appended: a resumed bout continues its log), through a logger of the bout's
    own: the application's logging, and the ``bugbout`` logger's level, stay as set."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    record = logging.Logger("bugbout.bout", logging.INFO)  # not in logging's registry
    record.addHandler(handler)
    progress.record = record
    try:
        yield
    finally:
        progress.record = None
        handler.close()


def render_markdown(result: BoutResult | Report) -> str:
    """The bout's report as Markdown (what ``report.md`` holds), rendered by the
    ``markdown`` reporter."""
    return render_report(result, "markdown")


def render_report(result: BoutResult | Report, reporter: str, **options: object) -> str:
    """The bout's report rendered by the reporter plugin named ``reporter`` (a built-in
    or an installed one) with its ``options``, as a bout renders its files:
    ``render_report(report, "html", title="tally, November")``."""
    from bugbout.core.contract.manager import create_plugin
    from bugbout.core.contract.types import ReporterPlugin

    report = result.report if isinstance(result, BoutResult) else result
    if report is None:
        raise BugboutError("this result has no report: run the bout to the end first")
    return create_plugin(ReporterPlugin, reporter, options).render(report)


def read_report(store: str | Path = ".bugbout", job: str | Path | None = None) -> Report:
    """The report of the last ``bugbout run`` on ``store``, rebuilt from its records as
    ``bugbout report`` does; of a sweep job, given the job's directory."""
    shared = Store(Path(store))
    output = Store(Path(job)) if job is not None else None
    return load_report(shared, output, transcript=pipeline.TranscriptHook())


def pool_reports(repositories: Sequence[str | Path]) -> Report:
    """One report over the last bouts of several ``repositories`` (each a repository
    with its ``.bugbout`` store, or a store), their tasks pooled, split by repository
    (named by its folder)."""
    from bugbout.core.report.pooling import pooled_report

    stores = []
    for given in map(Path, repositories):
        store = given / ".bugbout" if (given / ".bugbout").is_dir() else given
        stores.append((store.resolve().parent.name, Store(store)))
    return pooled_report(stores, transcript=pipeline.TranscriptHook())


def _earlier_reports(output: Store) -> list[str]:
    """The report files the last job in ``output`` wrote (none when its record is
    unreadable: a file bugbout did not record writing is never removed)."""
    try:
        earlier = output.read(JOB, Job)
    except BugboutError:
        return []
    return earlier.reports if earlier else []
