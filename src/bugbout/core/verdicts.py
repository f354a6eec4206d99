"""After the race: cross-examine, judge, score and audit every task, then report.

Each test run's record (base run, matrix, score, audit) is kept in the store's shared
evidence under a key derived from what it is computed from (:mod:`bugbout.core.evidence`),
so a bout resumes at any step, nothing is computed twice, and a changed input is never
judged on a stale record. A bout's own copies go to its output directory (``.bugbout/``
itself, or a sweep job's directory), beside ``job.json``, which names the attempts from
the shared store that the bout used:

- ``matrices/<task>.json``: every author's tests against every patch (cross-examination);
- ``verdicts.json``: per task and judge policy, the pick or the abstention, and why;
- ``resolutions.json``: every patch's score against the hidden tests, and each pick's;
- ``audits.json``: the auditor's verdict and route for every patch.

With ``run.repeats`` > 1 the first repeat of every contestant is the bout above; the
later repeats are scored against the hidden tests, each its own patch, and kept in the
shared evidence only: they are samples of a contestant's success rate (pass@k, pass^k),
while the judge picks one patch per task among the contestants'.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from bugbout.core.audit.audit_gate import run_gate
from bugbout.core.audit.auditing import Auditor, AuditRequest
from bugbout.core.audit.base_run import run_base
from bugbout.core.audit.recall import fix_source_diff
from bugbout.core.crossexam.crossexam import cross_examine
from bugbout.core.evidence import EvidenceKeys, EvidenceSpec, Shared, ends_alike
from bugbout.core.judge.judging import Judge, JudgeContext
from bugbout.core.plumbing.bench import Bench
from bugbout.core.plumbing.runtime.executor import Executor, run_jobs
from bugbout.core.plumbing.runtime.progress import Progress, SilentProgress
from bugbout.core.plumbing.selection.affected import BaseRun, Selection, selections
from bugbout.core.plumbing.testruns.timeouts import killed, timeouts
from bugbout.core.plumbing.tools import Benches
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.race.contestants import Contestant
from bugbout.core.race.stored import earlier_rounds, repeats_of
from bugbout.core.score.scoring import score
from bugbout.core.store.race_records import Attempt, Audit, Score
from bugbout.core.store.records import Oracle, OracleSet, Task, TaskSet, TestRun, record_threads
from bugbout.core.store.store import AUDITS, RESOLUTIONS, VERDICTS, Store, matrix_path
from bugbout.core.store.verdict_records import (
    UNFIXED,
    AuditSet,
    Matrix,
    PatchResolution,
    ResolutionSet,
    TaskResolutions,
    Verdict,
    VerdictSet,
)


@dataclass(frozen=True)
class VerdictsSpec:
    """What the stages after the race take from the bout's settings: what their evidence
    is computed under (``verdicts:``, the auditor, the confinement), the judge's policy
    (its name), how many tasks' test runs go at once (``tasks.jobs``), how many repeats
    each contestant has (``run.repeats``) and the repository."""

    evidence: EvidenceSpec
    policy: str
    jobs: int
    repeats: int
    repository: Path


class BenchesSource(Protocol):
    """How an evidence job gets the bout's benches and auditor: the driver's own in this
    process, rebuilt from their specs in another (picklable)."""

    def __call__(self) -> tuple[Benches, Auditor]: ...


@dataclass(frozen=True)
class VerdictsPlugins:
    """The plugin implementations the stages after the race use: the judge (``judged_by``:
    the distribution it came from, named when it crashes), the auditor, the test benches
    they make, the executor their test runs go to (made when a run needs one), how a job
    sent to another process rebuilds its benches and auditor (``remote``), and the
    lifecycle hooks (``notify``)."""

    judge: Judge
    judged_by: str
    auditor: Auditor
    benches: Benches
    executor: Callable[[], Executor]
    remote: BenchesSource
    notify: Callable[..., None]


class Verdicts:
    """Cross-examination, judging, scoring and auditing of a bout's scored tasks.

    A task's test runs (its matrix, scores and audits, each taken from the store's shared
    evidence when stored under its key) are one job on the bout's executor, ``tasks.jobs``
    tasks at a time; the judge decides in the driver, which writes the bout's own records
    as each task's evidence comes back."""

    def __init__(
        self,
        spec: VerdictsSpec,
        plugins: VerdictsPlugins,
        store: Store,
        progress: Progress | None = None,
        *,
        output: Store | None = None,
        executor: Executor | None = None,
    ) -> None:
        self.spec = spec
        self.plugins = plugins
        self.store = store
        self.output = output or store
        """Where this bout's matrices, verdicts, scores and audits go."""
        self.progress = progress or SilentProgress()
        self.executor = executor
        """Where the test runs go; without one, the plugins' executor, for one :meth:`run`."""
        self.judge = plugins.judge
        self.auditor = plugins.auditor
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
        executor = self.executor or self.plugins.executor()
        width = self.spec.jobs
        jobs_each = max(1, width // min(width, len(scored)))
        benches = self.plugins.benches
        try:
            with Git(self.spec.repository) as git:
                checkouts = benches.checkouts(git)
                jobs = [
                    self._job(
                        task,
                        oracles.root[task.id],
                        racers,
                        suite=benches.suite(task, checkouts),
                        in_process=executor.in_process,
                        width=jobs_each,
                    )
                    for task in scored
                ]
            for job, future in run_jobs(executor, jobs, width):
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
        suite: tuple[str, ...],
        in_process: bool,
        width: int,
    ) -> EvidenceJob:
        """``task``'s test runs: the job finds in the store's shared evidence what any bout
        left there under the same keys, and computes the rest."""
        for stage in ("crossexam", "score", "audit"):
            self.plugins.notify(f"bugbout_before_{stage}", task=task)
        plugins = self.plugins
        return EvidenceJob(
            spec=self.spec,
            store=self.store,
            keys=EvidenceKeys(task, oracle, self.spec.evidence, suite),
            attempts=_stored_attempts(self.store, task, racers),
            tools=_Local(plugins.benches, plugins.auditor) if in_process else plugins.remote,
            earlier=earlier_rounds(self.store, task, racers),
            repeats=repeats_of(self.store, task, racers, self.spec.repeats),
            jobs=width,
        )

    def _decide(
        self,
        job: EvidenceJob,
        evidence: TaskEvidence,
        verdicts: VerdictSet,
        resolutions: ResolutionSet,
        audits: AuditSet,
    ) -> None:
        """Judge ``job``'s task on its evidence and write every record it changed."""
        task = job.task
        self.runs_made += evidence.made
        self.runs_reused += evidence.reused
        scores = resolutions.root.setdefault(task.id, TaskResolutions())
        before = self.output.read(matrix_path(task.id), Matrix)
        if before is None or before.key != evidence.matrix.key:
            # other policies' verdicts rest on the old matrix: drop them
            self.output.write(matrix_path(task.id), evidence.matrix)
            verdicts.root[task.id] = {}
            scores.picks.clear()
        notify = self.plugins.notify
        notify("bugbout_after_crossexam", task=task, matrix=evidence.matrix)
        notify("bugbout_before_judge", task=task, matrix=evidence.matrix)
        verdict = self._judge(task, evidence.matrix, job.attempts)
        verdicts.root.setdefault(task.id, {})[verdict.policy] = verdict
        self.output.write(VERDICTS, verdicts)
        notify("bugbout_after_judge", task=task, verdict=verdict)
        scores.patches.update(evidence.scores)
        notify("bugbout_after_score", task=task, resolutions=evidence.scores)
        if evidence.audits:
            audits.root.setdefault(task.id, {}).update(evidence.audits)
            self.output.write(AUDITS, audits)
        notify("bugbout_after_audit", task=task, audits=evidence.audits)
        for problem in evidence.problems:
            self.progress.warn(problem)
        pick = scores.patches.get(verdict.pick) if verdict.pick else None
        scores.picks[verdict.policy] = pick.score if pick else Score.NO_FIX
        self.output.write(RESOLUTIONS, resolutions)
        self.progress.advance(f"{task.id}: {verdict.policy} {verdict.pick or 'abstained'}")

    def _judge(self, task: Task, matrix: Matrix, attempts: list[Attempt]) -> Verdict:
        """The judge's verdict; a judge that crashes is recorded as an abstention that
        names it, not lost and not fatal to the rest of the bout."""
        policy = self.spec.policy
        try:
            return self.judge.judge(matrix, JudgeContext.from_attempts(task.id, attempts))
        except Exception as exc:
            reason = (
                f"judge {policy!r} from {self.plugins.judged_by} crashed: "
                f"{type(exc).__name__}: {exc}"
            )
            self.progress.warn(f"{task.id}: {reason}")
            return Verdict(task_id=task.id, policy=policy, reason=reason)


@dataclass
class TaskEvidence:
    """A task's evidence for one bout: its matrix, every contestant's score and audit
    (an audit is missing when the auditor failed: ``problems`` says why), how many of
    these (retry rounds' and repeats' scores included) were computed now (``made``) and
    how many were found in the store (``reused``)."""

    matrix: Matrix
    scores: dict[str, PatchResolution] = field(default_factory=dict)
    audits: dict[str, Audit] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    made: int = 0
    reused: int = 0

    def tally(self, made: bool) -> None:
        if made:
            self.made += 1
        else:
            self.reused += 1


@dataclass(frozen=True)
class _Local:
    """The bout's benches and auditor, for jobs run in this process."""

    benches: Benches
    auditor: Auditor

    def __call__(self) -> tuple[Benches, Auditor]:
        return self.benches, self.auditor


@dataclass(frozen=True)
class EvidenceJob:
    """One task's test runs. Each record is read from the store's shared evidence, or
    computed and written there under its lock, so jobs of other bouts needing it at once
    wait for it instead of computing it again. Run in this process the job uses the
    bout's benches and auditor; sent to another process (a Ray worker) it is picklable
    and rebuilds them there from their specs (``tools``)."""

    spec: VerdictsSpec
    store: Store
    keys: EvidenceKeys
    attempts: list[Attempt]
    tools: BenchesSource
    earlier: list[Attempt] = field(default_factory=list)
    """Retry rounds before the last, scored for pass@k."""
    repeats: list[Attempt] = field(default_factory=list)
    """The contestants' repeats after the first (``run.repeats``), each scored: samples
    of their success rate, neither cross-examined, judged nor audited."""
    jobs: int = 1
    """How many of its pytest processes may run at once."""

    @property
    def task(self) -> Task:
        return self.keys.task

    def __call__(self) -> TaskEvidence:
        benches, auditor = self.tools()
        with Git(self.spec.repository) as git:

            def bench() -> Bench:
                timeout = self.spec.evidence.verdicts.timeout
                return benches.bench(self.task, benches.checkouts(git), timeout)

            return _Runs(self, bench, auditor).evidence()


class _Runs:
    """One job's test runs on its bench: each record the store lacks is computed once,
    the base run and the selections only when a matrix or an audit needs them, and the
    bench (the task's environment) only when a run is made."""

    def __init__(self, job: EvidenceJob, bench: Callable[[], Bench], auditor: Auditor) -> None:
        self.job, self.auditor = job, auditor
        self._make_bench = bench
        self._bench: Bench | None = None
        self._benching = threading.Lock()
        self.task, self.oracle, self.keys = job.task, job.keys.oracle, job.keys
        self.shared = Shared(job.store, job.task)
        self.verdicts = job.spec.evidence.verdicts
        self.affected = self.verdicts.tests == "affected"
        self.contestants = [a for a in job.attempts if a.role == "contestant"]
        self.timed: list[tuple[str, TestRun]] = []
        """The runs made now, for the timeouts warning."""
        self.problems: list[str] = []
        """Auditors that failed."""
        self._base: tuple[BaseRun, dict[str, Selection] | None] | None = None
        self._fix: str | None = None
        self._lock = threading.Lock()

    @property
    def bench(self) -> Bench:
        """The task's bench, built at its first use."""
        with self._benching:
            if self._bench is None:
                self._bench = self._make_bench()
            return self._bench

    def evidence(self) -> TaskEvidence:
        key = self.keys.matrix(self.job.attempts)
        matrix, made = self.shared.once("matrix", Matrix, key, lambda: self._matrix(key))
        assert matrix is not None  # a cross-examination always makes one
        evidence = TaskEvidence(matrix)
        evidence.tally(made)
        if made:
            self.timed += list(matrix.runs.items())
        with record_threads(self.job.jobs) as pool:  # jobs at a time
            found = list(pool.map(self._patch_runs, self.contestants))
        for attempt, ((resolution, scored), (audit, audited)) in zip(
            self.contestants, found, strict=True
        ):
            evidence.scores[attempt.contestant] = resolution
            evidence.tally(scored)
            if audit is not None:
                evidence.audits[attempt.contestant] = audit
                evidence.tally(audited)
        for attempt in [*self.job.earlier, *self.job.repeats]:
            evidence.tally(self._score(attempt)[1])
        evidence.problems += self.problems
        warning = timeouts([(name, how) for name, run in self.timed if (how := killed(run))])
        if warning:
            evidence.problems.append(f"{self.task.id}: {warning}")
        return evidence

    def _patch_runs(
        self, attempt: Attempt
    ) -> tuple[tuple[PatchResolution, bool], tuple[Audit | None, bool]]:
        """The attempt's score and audit, each from the store or made now."""
        key = self.keys.audit(attempt)
        audit = self.shared.once("audit", Audit, key, lambda: self._audit(attempt, key))
        return self._score(attempt), audit

    def _score(self, attempt: Attempt) -> tuple[PatchResolution, bool]:
        """The attempt's score, from the store or made now."""

        confined = self.keys.confinement

        def make() -> PatchResolution:
            made = score(self.task, self.oracle, attempt, self.bench)
            return made.model_copy(update={"key": attempt.revision, "confinement": confined})

        key, timeout = self.keys.score(attempt), self.verdicts.timeout
        found, made = self.shared.once(
            "score",
            PatchResolution,
            key,
            make,
            holds=attempt.revision,
            usable=lambda stored: (
                stored.confinement == confined and ends_alike(stored.run, timeout)
            ),
        )
        assert found is not None  # scoring always makes one
        return found, made

    def _selected(self) -> tuple[BaseRun, dict[str, Selection] | None]:
        """The task's base run, from the store or made now (with its coverage map when
        ``verdicts.tests`` is ``affected``), and each contestant's selection from it."""
        with self._lock:
            if self._base is None:
                key = self.keys.base

                def make() -> BaseRun:
                    made = run_base(self.task, self.bench, coverage=self.affected)
                    return made.model_copy(update={"key": key})

                base, made = self.shared.once("base", BaseRun, key, make)
                assert base is not None  # a base run always makes one
                if made:
                    self.timed.append((UNFIXED, base.run))
                chosen = None
                if self.affected:
                    tree = self.bench.checkouts.base(self.task.parent)
                    chosen = selections(
                        base,
                        self.oracle,
                        self.contestants,
                        base_tree=tree,
                        suite=self.bench.suite,
                        runner=self.bench.runner,
                    )
                self._base = (base, chosen)
            return self._base

    def _matrix(self, key: str) -> Matrix:
        chosen = None
        if self.verdicts.run_suite and self.affected:
            _, chosen = self._selected()
        return cross_examine(
            self.task,
            self.job.attempts,
            self.bench,
            run_suite=self.verdicts.run_suite,
            suite=chosen,
            jobs=self.job.jobs,
        ).model_copy(update={"key": key})

    def _fix_diff(self) -> str:
        """The maintainers' source change, read once (auditors measuring recall use it)."""
        with self._lock:
            if self._fix is None:
                self._fix = fix_source_diff(self.bench.git, self.task)
            return self._fix

    def _audit(self, attempt: Attempt, key: str) -> Audit | None:
        """The attempt's hidden audit; ``None`` (and a problem said) when the auditor fails."""
        base, chosen = self._selected()
        try:
            gate, baseline = run_gate(
                self.task,
                attempt,
                self.bench,
                tests=self.bench.suite,
                baseline=base.run,
                selection=(chosen or {}).get(attempt.contestant),
            )
            self.timed.append((attempt.contestant, gate))
            request = AuditRequest.hidden(
                self.task, self.oracle, attempt, gate=gate, baseline=baseline, fix=self._fix_diff()
            )
            audit = self.auditor.audit(request)
        except Exception as exc:  # a broken auditor must not lose the bout
            self.problems.append(
                f"auditor {self.job.spec.evidence.auditor.name!r} failed on {attempt.contestant} / "
                f"{self.task.id}: {type(exc).__name__}: {exc}"
            )
            return None
        return audit.model_copy(update={"key": key, "timeout": killed(gate)})


def _stored_attempts(store: Store, task: Task, racers: list[Contestant]) -> list[Attempt]:
    found = []
    for racer in racers:
        attempt = store.read(racer.path(task), Attempt)
        if attempt is not None:
            found.append(attempt)
    return found
