"""After the race: cross-examine, judge, score and audit every task, then report.

Each step reads records and writes records, keyed by what determined them, so a bout
resumes at any step and nothing is computed twice. They belong to one bout (one sweep
job): they go to its output directory (``.bugbout/`` itself, or a sweep job's directory),
beside ``job.json``, which names the attempts from the shared store that the bout used:

- ``matrices/<task>.json``: every author's tests against every patch (cross-examination);
- ``verdicts.json``: per task and judge policy, the pick or the abstention, and why;
- ``resolutions.json``: every patch's score against the hidden tests, and each pick's;
- ``audits.json``: the auditor's verdict and route for every patch.
"""

from __future__ import annotations

from typing import Any

from bugbout.core.auditing import Auditor, AuditRequest, run_gate
from bugbout.core.checkout import Checkouts
from bugbout.core.crossexam import cross_examine
from bugbout.core.git import Git
from bugbout.core.judging import Judge, JudgeContext
from bugbout.core.manager import Plugins
from bugbout.core.progress import Progress, SilentProgress
from bugbout.core.race import Contestant, Race
from bugbout.core.records import (
    Attempt,
    Audit,
    AuditSet,
    Job,
    Matrix,
    OracleSet,
    ResolutionSet,
    Score,
    Task,
    TaskResolutions,
    TaskSet,
    TestRun,
    Verdict,
    VerdictSet,
    digest,
)
from bugbout.core.report import Report, build_report
from bugbout.core.scoring import score
from bugbout.core.settings import BoutSettings
from bugbout.core.store import Store, write_atomic

VERDICTS = "verdicts.json"
RESOLUTIONS = "resolutions.json"
AUDITS = "audits.json"
JOB = "job.json"


def check_verdict_plugins(settings: BoutSettings, plugins: Plugins) -> None:
    """Fail before any work when the judge, auditor or a reporter is unknown or misconfigured."""
    plugins.get("judge", settings.judge.name).spec.parse_options(settings.judge.options)
    plugins.get("auditor", settings.auditor.name).spec.parse_options(settings.auditor.options)
    for reporter in settings.reporters:
        plugins.get("reporter", reporter)


def matrix_path(task_id: str) -> str:
    return f"matrices/{task_id}.json"


class Verdicts:
    """Cross-examination, judging, scoring and auditing of a bout's scored tasks."""

    def __init__(
        self,
        settings: BoutSettings,
        plugins: Plugins,
        store: Store,
        race: Race,
        progress: Progress | None = None,
        *,
        output: Store | None = None,
    ) -> None:
        self.settings = settings
        self.plugins = plugins
        self.store = store
        self.output = output or store
        """Where this bout's matrices, verdicts, scores and audits go."""
        self.race = race
        self.progress = progress or SilentProgress()
        self._baseline: TestRun | None = None
        self.judge: Judge = plugins.create("judge", settings.judge.name, settings.judge.options)
        self.auditor: Auditor = plugins.create(
            "auditor", settings.auditor.name, settings.auditor.options
        )

    def run(self, tasks: TaskSet, oracles: OracleSet, racers: list[Contestant]) -> None:
        """Decide every scored task; each record is written as soon as it is final."""
        verdicts = self.output.read(VERDICTS, VerdictSet) or VerdictSet()
        resolutions = self.output.read(RESOLUTIONS, ResolutionSet) or ResolutionSet()
        audits = self.output.read(AUDITS, AuditSet) or AuditSet()
        scored = [t for t in tasks.tasks if t.scored and t.id in oracles.root]
        self.progress.start("cross-examining, judging, scoring, auditing", total=len(scored))
        with Git(self.settings.repository) as git:
            checkouts = Checkouts(git, self.race.home / "checkouts")
            for task in scored:
                attempts = _stored_attempts(self.store, task, racers)
                environment = self.race.environment(task, checkouts)
                matrix, fresh = self._matrix(task, attempts, checkouts, environment)
                if fresh:  # other policies' verdicts rest on the old matrix: drop them
                    verdicts.root[task.id] = {}
                    resolutions.root.setdefault(task.id, TaskResolutions()).picks.clear()
                verdict = self._judge(task, matrix, attempts)
                verdicts.root.setdefault(task.id, {})[verdict.policy] = verdict
                self.output.write(VERDICTS, verdicts)
                scores = resolutions.root.setdefault(task.id, TaskResolutions())
                task_audits = audits.root.setdefault(task.id, {})
                self._baseline = None
                for attempt in attempts:
                    if attempt.role != "contestant":
                        continue
                    common: dict[str, Any] = {
                        "checkouts": checkouts,
                        "environment": environment,
                        "project": self.settings.project,
                        "timeout": self.settings.tasks.timeout,
                        "confine": self.race.confine_tests,
                        "git": git,
                    }
                    previous = scores.patches.get(attempt.contestant)
                    if previous is None or previous.key != attempt.key:
                        resolution = score(task, oracles.root[task.id], attempt, **common)
                        scores.patches[attempt.contestant] = resolution.model_copy(
                            update={"key": attempt.key}
                        )
                        self.output.write(RESOLUTIONS, resolutions)
                    audit_key = digest(attempt.key, self.settings.auditor.model_dump_json())
                    old = task_audits.get(attempt.contestant)
                    if old is None or old.key != audit_key:
                        try:
                            audit = self._audit(task, oracles, attempt, common)
                        except Exception as exc:  # a broken auditor must not lose the bout
                            self.progress.warn(
                                f"auditor {self.settings.auditor.name!r} failed on "
                                f"{attempt.contestant} / {task.id}: {type(exc).__name__}: {exc}"
                            )
                            continue
                        task_audits[attempt.contestant] = audit.model_copy(
                            update={"key": audit_key}
                        )
                        self.output.write(AUDITS, audits)
                pick = scores.patches.get(verdict.pick) if verdict.pick else None
                scores.picks[verdict.policy] = pick.score if pick else Score.NO_FIX
                self.output.write(RESOLUTIONS, resolutions)
                self.progress.advance(f"{task.id}: {verdict.policy} {verdict.pick or 'abstained'}")
        self.progress.finish()

    def _judge(self, task: Task, matrix: Matrix, attempts: list[Attempt]) -> Verdict:
        """The judge's verdict; a judge that crashes is recorded as an abstention that
        names it, not lost and not fatal to the rest of the bout."""
        policy = self.settings.judge.name
        try:
            return self.judge.judge(matrix, JudgeContext.from_attempts(task.id, attempts))
        except Exception as exc:
            registered = self.plugins.get("judge", policy)
            reason = (
                f"judge {policy!r} from {registered.distribution} crashed: "
                f"{type(exc).__name__}: {exc}"
            )
            self.progress.warn(f"{task.id}: {reason}")
            return Verdict(task_id=task.id, policy=policy, reason=reason)

    def _matrix(
        self, task: Task, attempts: list[Attempt], checkouts: Checkouts, environment: Any
    ) -> tuple[Matrix, bool]:
        """The task's matrix, and whether it was computed now (the attempts changed)."""
        key = digest(*sorted(a.key for a in attempts), str(self.settings.judge.run_suite))
        stored = self.output.read(matrix_path(task.id), Matrix)
        if stored is not None and stored.key == key:
            return stored, False
        matrix = cross_examine(
            task,
            attempts,
            checkouts=checkouts,
            environment=environment,
            project=self.settings.project,
            run_suite=self.settings.judge.run_suite,
            timeout=self.settings.tasks.timeout,
            confine=self.race.confine_tests,
        ).model_copy(update={"key": key})
        self.output.write(matrix_path(task.id), matrix)
        return matrix, True

    def _audit(
        self, task: Task, oracles: OracleSet, attempt: Attempt, common: dict[str, Any]
    ) -> Audit:
        gate, baseline = run_gate(
            task, attempt, tests=[self.settings.project.tests], baseline=self._baseline, **common
        )
        self._baseline = baseline  # the unfixed code's gate: captured once per task
        request = AuditRequest.hidden(
            task, oracles.root[task.id], attempt, gate=gate, baseline=baseline
        )
        return self.auditor.audit(request)


def _stored_attempts(store: Store, task: Task, racers: list[Contestant]) -> list[Attempt]:
    found = []
    for racer in racers:
        attempt = store.read(racer.path(task), Attempt)
        if attempt is not None:
            found.append(attempt)
    return found


def load_report(store: Store, output: Store | None = None) -> Report:
    """The report of the bout whose records are in ``output`` (default: the store's own,
    those of the last ``bugbout run``), rebuilt from the records: the shared store's tasks
    and ground truth, the attempts its ``job.json`` names, its verdicts."""
    output = output or store
    tasks = store.read("tasks.json", TaskSet) or TaskSet()
    oracles = store.read("oracles.json", OracleSet) or OracleSet()
    job = output.read(JOB, Job)
    if job is not None:  # the bout's own tasks, whatever a later bout mined
        mined = set(job.tasks)
        tasks.tasks = [task for task in tasks.tasks if task.id in mined]
    attempts = [
        attempt
        for used in (job.attempts if job else [])
        for name in _with_earlier_rounds(store, used.path)
        if (attempt := store.read(name, Attempt)) is not None
    ]
    resolutions = output.read(RESOLUTIONS, ResolutionSet) or ResolutionSet()
    verdicts = output.read(VERDICTS, VerdictSet) or VerdictSet()
    audits = output.read(AUDITS, AuditSet) or AuditSet()
    matrices = [
        matrix
        for path in sorted(output.path("matrices").glob("*.json"))
        if (matrix := output.read(f"matrices/{path.name}", Matrix)) is not None
    ]
    return build_report(
        tasks,
        oracles,
        attempts,
        [r for scores in resolutions.root.values() for r in scores.patches.values()],
        [v for by_policy in verdicts.root.values() for v in by_policy.values()],
        [a for by_name in audits.root.values() for a in by_name.values()],
        matrices,
    )


def _with_earlier_rounds(store: Store, name: str) -> list[str]:
    """An attempt's record and its earlier rounds' (``<key>.roundN.json``), oldest first."""
    path = store.path(name)
    rounds = sorted(
        path.parent.glob(f"{path.stem}.round*.json"),
        key=lambda p: int(p.name.removesuffix(".json").rsplit("round", 1)[1]),
    )
    return [str(p.relative_to(store.root)) for p in rounds] + [name]


def write_reports(
    report: Report, store: Store, plugins: Plugins, names: tuple[str, ...]
) -> dict[str, str]:
    """Render ``report`` with each named reporter; files go to the store. Returns the
    printed renderings (e.g. ``terminal``) by reporter name."""
    printed: dict[str, str] = {}
    for name in names:
        reporter = plugins.create("reporter", name)
        try:
            text = reporter.render(report)
        except Exception as exc:  # one broken reporter must not stop the others
            registered = plugins.get("reporter", name)
            plugins.problems.append(
                f"reporter {name!r} from {registered.distribution} failed: "
                f"{type(exc).__name__}: {exc}"
            )
            continue
        if reporter.filename:
            store.ensure()
            write_atomic(store.path(reporter.filename), text)
        else:
            printed[name] = text
    return printed
