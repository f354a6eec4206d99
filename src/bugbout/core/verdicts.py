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

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from bugbout.core.audit.audit_gate import run_gate
from bugbout.core.audit.auditing import Auditor, AuditRequest
from bugbout.core.audit.recall import fix_source_diff
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings
from bugbout.core.contract.types import AuditorPlugin, JudgePlugin
from bugbout.core.crossexam.affected import BaseRun
from bugbout.core.crossexam.base_run import run_base, selections
from bugbout.core.crossexam.crossexam import cross_examine
from bugbout.core.crossexam.timeouts import killed, timeouts
from bugbout.core.evidence import Shared, earlier_rounds
from bugbout.core.judge.judging import JudgeContext
from bugbout.core.plumbing.bench import Bench
from bugbout.core.plumbing.executor import Executor, make_executor, run_jobs
from bugbout.core.plumbing.git import Git
from bugbout.core.plumbing.progress import Progress, SilentProgress
from bugbout.core.plumbing.tools import Tools
from bugbout.core.race.contestants import Contestant
from bugbout.core.report.reporters import build_reporters
from bugbout.core.score.scoring import score
from bugbout.core.store.records import (
    UNFIXED,
    Attempt,
    Audit,
    AuditSet,
    Matrix,
    Oracle,
    OracleSet,
    Resolution,
    ResolutionSet,
    Score,
    Task,
    TaskResolutions,
    TaskSet,
    Verdict,
    VerdictSet,
    digest,
)
from bugbout.core.store.store import AUDITS, RESOLUTIONS, VERDICTS, Store, matrix_path


def check_verdict_plugins(settings: BoutSettings, plugins: Plugins) -> None:
    """Fail before any work when the judge, auditor or a reporter is unknown or misconfigured."""
    plugins.get(JudgePlugin, settings.judge.name).spec.parse_options(settings.judge.options)
    plugins.get(AuditorPlugin, settings.auditor.name).spec.parse_options(settings.auditor.options)
    build_reporters(settings.reporters, plugins)


class Verdicts:
    """Cross-examination, judging, scoring and auditing of a bout's scored tasks.

    A task's test runs (its matrix, the scores and audits that are missing) are one job
    on the bout's executor, ``tasks.jobs`` tasks at a time; the judge decides in the
    driver, and every record is written there as each task's evidence comes back."""

    def __init__(
        self,
        tools: Tools,
        progress: Progress | None = None,
        *,
        output: Store | None = None,
        executor: Executor | None = None,
    ) -> None:
        self.tools = tools
        self.settings = settings = tools.settings
        self.plugins = tools.plugins
        self.store = tools.store
        self.output = output or tools.store
        """Where this bout's matrices, verdicts, scores and audits go."""
        self.progress = progress or SilentProgress()
        self.executor = executor
        """Where the test runs go; without one, the settings' executor, for one :meth:`run`."""
        self.judge = self.plugins.create(JudgePlugin, settings.judge.name, settings.judge.options)
        self.auditor = make_auditor(tools)
        self._reused: dict[str, Reused] = {}
        self.runs_made = 0
        """Matrices, scores and audits this bout computed (each one or more pytest runs)."""
        self.runs_reused = 0
        """Those it found in the store, computed by an earlier bout or sweep job."""

    def run(self, tasks: TaskSet, oracles: OracleSet, racers: list[Contestant]) -> None:
        """Decide every scored task; each task's records are written as soon as its
        evidence is in."""
        verdicts = self.output.read(VERDICTS, VerdictSet) or VerdictSet()
        resolutions = self.output.read(RESOLUTIONS, ResolutionSet) or ResolutionSet()
        audits = self.output.read(AUDITS, AuditSet) or AuditSet()
        scored = [t for t in tasks.tasks if t.scored and t.id in oracles.root]
        self.progress.start("cross-examining, judging, scoring, auditing", total=len(scored))
        if not scored:
            self.progress.finish()
            return
        executor = self.executor or make_executor(self.settings, self.plugins)
        jobs_each = max(1, self.settings.tasks.jobs // min(self.settings.tasks.jobs, len(scored)))
        try:
            with Git(self.settings.repository) as git:
                checkouts = self.tools.checkouts(git)
                jobs = {
                    task.id: self._job(
                        task,
                        oracles.root[task.id],
                        racers,
                        stored=(resolutions, audits),
                        suite=self.tools.suite(task, checkouts),
                        in_process=executor.in_process,
                        width=jobs_each,
                    )
                    for task in scored
                }
            for job, future in run_jobs(executor, jobs.values(), self.settings.tasks.jobs):
                try:
                    evidence = future.result()
                except Exception as exc:  # the worker died: no verdict now, the next run tries
                    self.progress.warn(
                        f"{job.task.id}: its test runs failed ({type(exc).__name__}: {exc}); "
                        "run again to decide it"
                    )
                    self.progress.advance(f"{job.task.id}: undecided")
                    continue
                self._decide(job, evidence, verdicts, resolutions, audits)
        finally:
            if executor is not self.executor:
                executor.close()
        self.progress.finish()

    def _job(
        self,
        task: Task,
        oracle: Oracle,
        racers: list[Contestant],
        *,
        stored: tuple[ResolutionSet, AuditSet],
        suite: tuple[str, ...],
        in_process: bool,
        width: int,
    ) -> EvidenceJob:
        """What is still to run for ``task``: its matrix unless stored with the same key
        (in this bout's records, or in the store's shared evidence, where any bout on
        the store left it), and the scores and audits of patches that changed. A suite
        that moved (not ``project.tests``) is part of every key."""
        resolutions, audits = stored
        attempts = _stored_attempts(self.store, task, racers)
        verdicts = self.settings.verdicts.key()
        if suite != (self.settings.project.tests,):
            verdicts = digest(verdicts, *suite)
        key = digest(*sorted(a.revision for a in attempts), str(self.settings.verdicts.run_suite))
        key = digest(key, verdicts)
        matrix = self.output.read(matrix_path(task.id), Matrix)
        shared = Shared(self.store, task, oracle)
        copied = None
        if matrix is None or matrix.key != key:
            matrix, copied = None, shared.read("matrix", Matrix, key)
        scores = resolutions.root.get(task.id, TaskResolutions()).patches
        task_audits = audits.root.get(task.id, {})
        auditor = digest(self.settings.auditor.model_dump_json(), verdicts)
        contestants = [a for a in attempts if a.role == "contestant"]
        base_key = digest(task.parent, self.settings.project.model_dump_json(), verdicts)
        reused = Reused(matrix=copied, base=shared.read("base", BaseRun, base_key))
        for a in contestants:
            if (old := scores.get(a.contestant)) is None or old.key != a.revision:
                found = shared.read("score", Resolution, a.revision)
                if found is not None:
                    reused.scores[a.contestant] = found
            if (done := task_audits.get(a.contestant)) is None or done.key != digest(
                a.revision, auditor
            ):
                found_audit = shared.read("audit", Audit, digest(a.revision, auditor))
                if found_audit is not None:
                    reused.audits[a.contestant] = found_audit
        self._reused[task.id] = reused
        earlier = [
            a
            for a in earlier_rounds(self.store, task, racers)
            if shared.read("score", Resolution, a.revision) is None
        ]
        return EvidenceJob(
            settings=self.settings,
            task=task,
            oracle=oracle,
            attempts=attempts,
            matrix_key=key,
            matrix=matrix or copied,
            rescore=[
                a.contestant
                for a in contestants
                if ((old := scores.get(a.contestant)) is None or old.key != a.revision)
                and a.contestant not in reused.scores
            ],
            reaudit=[
                a.contestant
                for a in contestants
                if (
                    (done := task_audits.get(a.contestant)) is None
                    or done.key != digest(a.revision, auditor)
                )
                and a.contestant not in reused.audits
            ],
            local=_Local(self.tools, self.auditor) if in_process else None,
            earlier=earlier,
            base=reused.base,
            base_key=base_key,
            auditor_key=auditor,
            jobs=width,
        )

    def _decide(
        self,
        job: EvidenceJob,
        evidence: Evidence,
        verdicts: VerdictSet,
        resolutions: ResolutionSet,
        audits: AuditSet,
    ) -> None:
        """Judge ``job``'s task on its evidence and write every record it changed."""
        task = job.task
        reused = self._reused.pop(task.id, Reused())
        self._count(evidence, reused)
        shared = Shared(self.store, task, job.oracle)
        if evidence.fresh:
            shared.write("matrix", evidence.matrix, job.matrix_key)
        if evidence.base is not None and reused.base is None:
            shared.write("base", evidence.base, job.base_key)
        for resolution in evidence.scores.values():
            shared.write("score", resolution, resolution.key)
        for audit in evidence.audits.values():
            shared.write("audit", audit, audit.key)
        for resolution in evidence.rounds:
            shared.write("score", resolution, resolution.key)
        evidence.scores.update(reused.scores)
        evidence.audits.update(reused.audits)
        scores = resolutions.root.setdefault(task.id, TaskResolutions())
        if evidence.fresh or reused.matrix is not None:
            # other policies' verdicts rest on the old matrix: drop them
            self.output.write(matrix_path(task.id), evidence.matrix)
            verdicts.root[task.id] = {}
            scores.picks.clear()
        verdict = self._judge(task, evidence.matrix, job.attempts)
        verdicts.root.setdefault(task.id, {})[verdict.policy] = verdict
        self.output.write(VERDICTS, verdicts)
        scores.patches.update(evidence.scores)
        if evidence.audits:
            audits.root.setdefault(task.id, {}).update(evidence.audits)
            self.output.write(AUDITS, audits)
        for problem in evidence.problems:
            self.progress.warn(problem)
        pick = scores.patches.get(verdict.pick) if verdict.pick else None
        scores.picks[verdict.policy] = pick.score if pick else Score.NO_FIX
        self.output.write(RESOLUTIONS, resolutions)
        self.progress.advance(f"{task.id}: {verdict.policy} {verdict.pick or 'abstained'}")

    def _count(self, evidence: Evidence, reused: Reused) -> None:
        """Tally the test-run records computed now and those found in the store."""
        made = int(evidence.fresh) + len(evidence.scores) + len(evidence.audits)
        made += len(evidence.rounds)
        found = int(reused.matrix is not None) + len(reused.scores) + len(reused.audits)
        self.runs_made += made
        self.runs_reused += found

    def _judge(self, task: Task, matrix: Matrix, attempts: list[Attempt]) -> Verdict:
        """The judge's verdict; a judge that crashes is recorded as an abstention that
        names it, not lost and not fatal to the rest of the bout."""
        policy = self.settings.judge.name
        try:
            return self.judge.judge(matrix, JudgeContext.from_attempts(task.id, attempts))
        except Exception as exc:
            registered = self.plugins.get(JudgePlugin, policy)
            reason = (
                f"judge {policy!r} from {registered.distribution} crashed: "
                f"{type(exc).__name__}: {exc}"
            )
            self.progress.warn(f"{task.id}: {reason}")
            return Verdict(task_id=task.id, policy=policy, reason=reason)


@dataclass
class Reused:
    """What a task's evidence takes from the store instead of running it again."""

    matrix: Matrix | None = None
    scores: dict[str, Resolution] = field(default_factory=dict)
    audits: dict[str, Audit] = field(default_factory=dict)
    base: BaseRun | None = None


@dataclass(frozen=True)
class Evidence:
    """A task's test runs for one bout: its matrix (``fresh``: computed now) and the
    scores and audits computed now, by contestant; ``problems``: auditor failures;
    ``base``: the task's base run; ``rounds``: the scores of retry rounds before the
    last, for pass@k."""

    matrix: Matrix
    fresh: bool
    scores: dict[str, Resolution]
    audits: dict[str, Audit]
    problems: list[str]
    base: BaseRun | None = None
    rounds: list[Resolution] = field(default_factory=list)


@dataclass(frozen=True)
class _Local:
    """The bout's tools and auditor, for jobs run in this process."""

    tools: Tools
    auditor: Auditor


@dataclass(frozen=True)
class EvidenceJob:
    """One task's test runs. Run in this process it uses the bout's tools and auditor
    (``local``); sent to another process (a Ray worker) it is picklable and rebuilds them
    there (:meth:`Tools.in_worker`)."""

    settings: BoutSettings
    task: Task
    oracle: Oracle
    attempts: list[Attempt]
    matrix_key: str
    matrix: Matrix | None
    """The stored matrix, when its key still holds."""
    rescore: list[str]
    reaudit: list[str]
    local: _Local | None = None
    earlier: list[Attempt] = field(default_factory=list)
    """Retry rounds before the last whose score is not stored yet."""
    base: BaseRun | None = None
    """The task's base run, when stored with the same key."""
    base_key: str = ""
    auditor_key: str = ""
    """What besides the patch determines its audit (the auditor, the verdicts settings)."""
    jobs: int = 1
    """How many of its pytest processes may run at once."""

    def __call__(self) -> Evidence:
        if self.local is None:
            tools = Tools.in_worker(self.settings)
            auditor = make_auditor(tools)
        else:
            tools, auditor = self.local.tools, self.local.auditor
        with Git(self.settings.repository) as git:
            bench = tools.bench(self.task, tools.checkouts(git), self.settings.verdicts.timeout)
            return self._run(bench, auditor)

    def _run(self, bench: Bench, auditor: Auditor) -> Evidence:
        """The task's base run (when a matrix or an audit needs it), its matrix, the
        scores and the audits, each patch's suite runs limited to its selection."""
        settings, task = self.settings, self.task
        affected = settings.verdicts.tests == "affected"
        base = self.base
        suite_needed = self.matrix is None and settings.verdicts.run_suite and affected
        if base is None and (self.reaudit or suite_needed):
            base = run_base(task, bench, coverage=affected)
        chosen = None
        if affected and base is not None:
            columns = [a for a in self.attempts if a.role == "contestant"]
            base_tree = bench.checkouts.base(task.parent)
            chosen = selections(base, self.oracle, columns, base_tree=base_tree, suite=bench.suite)
        matrix = self.matrix or cross_examine(
            task,
            self.attempts,
            bench,
            run_suite=settings.verdicts.run_suite,
            suite=chosen,
            jobs=self.jobs,
        ).model_copy(update={"key": self.matrix_key})
        evidence = Evidence(matrix, self.matrix is None, {}, {}, [], base)
        timed = list(matrix.runs.items()) if evidence.fresh else []
        if self.base is None and base is not None:
            timed.append((UNFIXED, base.run))

        fix = fix_source_diff(bench.git, task) if self.reaudit else ""

        def patch_runs(attempt: Attempt) -> None:
            """The attempt's score and audit, whichever are missing."""
            if attempt.contestant in self.rescore:
                resolution = score(task, self.oracle, attempt, bench)
                evidence.scores[attempt.contestant] = resolution.model_copy(
                    update={"key": attempt.revision}
                )
            if attempt.contestant not in self.reaudit or base is None:
                return
            try:
                gate, baseline = run_gate(
                    task,
                    attempt,
                    bench,
                    tests=bench.suite,
                    baseline=base.run,
                    selection=(chosen or {}).get(attempt.contestant),
                )
                timed.append((attempt.contestant, gate))
                request = AuditRequest.hidden(
                    task, self.oracle, attempt, gate=gate, baseline=baseline, fix=fix
                )
                audit = auditor.audit(request)
            except Exception as exc:  # a broken auditor must not lose the bout
                evidence.problems.append(
                    f"auditor {settings.auditor.name!r} failed on {attempt.contestant} / "
                    f"{task.id}: {type(exc).__name__}: {exc}"
                )
                return
            key = digest(attempt.revision, self.auditor_key)
            evidence.audits[attempt.contestant] = audit.model_copy(
                update={"key": key, "timeout": killed(gate)}
            )

        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            list(pool.map(patch_runs, self.attempts))  # each patch's runs, jobs at a time
        for attempt in self.earlier:
            resolution = score(task, self.oracle, attempt, bench)
            evidence.rounds.append(resolution.model_copy(update={"key": attempt.revision}))
        warning = timeouts([(name, how) for name, run in timed if (how := killed(run))])
        if warning:
            evidence.problems.append(f"{task.id}: {warning}")
        return evidence


def make_auditor(tools: Tools) -> Auditor:
    """The auditor the bout's settings select."""
    auditor = tools.settings.auditor
    return tools.plugins.create(AuditorPlugin, auditor.name, auditor.options)


def _stored_attempts(store: Store, task: Task, racers: list[Contestant]) -> list[Attempt]:
    found = []
    for racer in racers:
        attempt = store.read(racer.path(task), Attempt)
        if attempt is not None:
            found.append(attempt)
    return found
