"""The race: every contestant on every scored task, each attempt in a fresh, history-free
checkout inside a sandbox; whatever changed on disk is its patch.

Attempts are queued in lanes, one per quota: runs sharing a quota take turns (or run
``run.quotas[quota]`` at a time), different quotas run in parallel. The lanes live here,
in the driver; the attempts themselves run on the bout's executor (threads here by
default, or Ray workers), so a quota holds however many workers there are. Each attempt
is written to the store the moment it ends, so a bout can stop anywhere and resume.
One attempt's run, step by step, is :mod:`bugbout.core.race.agent_run`.
"""

from __future__ import annotations

import threading
import traceback
import uuid
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from bugbout.core.contract.errors import BugboutError
from bugbout.core.plumbing.confinement.leftovers import Leftovers
from bugbout.core.plumbing.models.budget import Budget, OverBudget
from bugbout.core.plumbing.runtime.executor import Executor, run_jobs
from bugbout.core.plumbing.runtime.progress import Progress, SilentProgress
from bugbout.core.plumbing.runtime.stopping import Interrupted, Stop, current_stop
from bugbout.core.plumbing.trees.checkout import Checkouts
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.race.agent_run import run_agent
from bugbout.core.race.contestants import Contestant, with_repeats
from bugbout.core.race.spec import AttemptSpec, RacePlugins, RaceSource, RaceSpec
from bugbout.core.store.race_records import RETRYABLE, Attempt, AttemptStatus
from bugbout.core.store.records import OracleSet, Task, TaskSet, record_threads
from bugbout.core.store.store import safe_name
from bugbout.core.store.verdict_records import JobAttempt


class Race:
    """Runs the pending attempts of a bout, given its spec and the plugins it uses."""

    def __init__(
        self,
        spec: RaceSpec,
        plugins: RacePlugins,
        progress: Progress | None = None,
        *,
        executor: Executor | None = None,
        stop: Stop | None = None,
    ) -> None:
        self.spec = spec
        self.plugins = plugins
        self.benches = plugins.benches
        self.store = plugins.benches.store
        self.progress = progress or SilentProgress()
        self.executor = executor
        """Where attempts run; without one, the plugins' executor, for one :meth:`run`."""
        self.stop = stop or Stop(self.spec.run.grace)
        """The bout's stop: once requested no attempt starts, once killed none is kept."""
        self.budget = Budget(self.spec.run.budget, spec.prices)
        """What the attempts this race runs spend, against ``run.budget``."""
        self._lock = threading.Lock()
        self.ran: set[str] = set()
        """Paths of the attempts this race ran (the others it found in the store)."""

    def pending(
        self, tasks: TaskSet, oracles: OracleSet, contestants: list[Contestant]
    ) -> Iterator[tuple[Task, Contestant, Attempt | None]]:
        """Every (task, contestant, repeat) still to run, new or failed and retried, with
        the record found for it."""
        for task in race_tasks(tasks, oracles):
            for contestant in with_repeats(contestants, self.spec.run.repeats):
                previous = self.store.read(contestant.path(task), Attempt)
                if to_run(previous, retry_failed=self.spec.run.retry_failed):
                    yield task, contestant, previous

    def job_attempts(
        self, tasks: TaskSet, oracles: OracleSet, contestants: list[Contestant]
    ) -> list[JobAttempt]:
        """Every stored attempt of these contestants (each repeat) on the raced tasks, and
        whether this race ran it or found it in the store."""
        return [
            JobAttempt(
                task_id=task.id,
                contestant=contestant.name,
                path=path,
                reused=path not in self.ran,
            )
            for task in race_tasks(tasks, oracles)
            for contestant in with_repeats(contestants, self.spec.run.repeats)
            if self.store.path(path := contestant.path(task)).exists()
        ]

    def run(
        self, tasks: TaskSet, oracles: OracleSet, contestants: list[Contestant]
    ) -> list[Attempt]:
        """Run every pending attempt, lane by lane; returns the attempts run now. Once
        the stop is requested no attempt starts: those running end, then
        :class:`Interrupted` is raised if some were left."""
        notify = self.plugins.notify
        notify("bugbout_before_race", tasks=tasks, oracles=oracles)
        finished = self._race(tasks, oracles, contestants)
        notify("bugbout_after_race", attempts=finished)
        return finished

    def _race(
        self, tasks: TaskSet, oracles: OracleSet, contestants: list[Contestant]
    ) -> list[Attempt]:
        self.stop.check()
        problem = self.benches.sandbox.problem()
        if problem:
            raise BugboutError(problem)
        lanes: dict[str, list[tuple[Task, Contestant, Attempt | None]]] = defaultdict(list)
        for task, contestant, previous in self.pending(tasks, oracles, contestants):
            lanes[contestant.quota].append((task, contestant, previous))
        total = sum(len(jobs) for jobs in lanes.values())
        self.progress.start(
            f"racing ({', '.join(f'{lane}: {len(jobs)}' for lane, jobs in sorted(lanes.items()))})"
            if lanes else "racing (nothing to run)",
            total=total,
        )  # fmt: skip
        finished: list[Attempt] = []
        if not lanes:
            self.progress.finish()
            return finished
        executor = self.executor or self.plugins.executor()
        try:
            attempts = self.budget.executor(self.stop.executor(executor, "attempt"))
            with Git(self.benches.repository) as git:
                checkouts = self.benches.checkouts(git)
                with record_threads(len(lanes)) as lanes_pool:
                    futures = [
                        lanes_pool.submit(self._run_lane, lane, jobs, checkouts, finished, attempts)
                        for lane, jobs in lanes.items()
                    ]
                    for future in futures:
                        future.result()
        finally:
            if executor is not self.executor:
                executor.close()
        self.progress.finish()
        return finished

    def _run_lane(
        self,
        lane: str,
        jobs: list[tuple[Task, Contestant, Attempt | None]],
        checkouts: Checkouts,
        finished: list[Attempt],
        executor: Executor,
    ) -> None:
        """Run a lane's attempts on the executor, at most the lane's quota at a time. An
        attempt the stop kept from starting, or killed, is left out (a killed one is stored
        as ``interrupted`` by its worker); one the budget kept from starting is recorded
        as not run."""
        width = self.spec.run.quotas.get(lane, 1)
        attempts: list[_LocalAttempt | RemoteAttempt] = [
            _LocalAttempt(self, task, contestant, previous, checkouts)
            if executor.in_process
            else RemoteAttempt(self.spec.attempt, self.plugins.remote, task, contestant, previous)
            for task, contestant, previous in jobs
        ]
        ended: set[int] = set()
        try:
            for job, future in run_jobs(executor, attempts, width):
                ended.add(id(job))
                task, contestant = job.task, job.contestant
                try:
                    attempt, ran = future.result()
                except Interrupted:
                    continue
                except Exception as exc:  # the worker died: record it, go on
                    attempt, ran = self._lost(task, contestant, job.previous, exc)
                if ran:
                    self.budget.add(attempt)
                    with self._lock:
                        self.ran.add(contestant.path(task))
                        finished.append(attempt)
                self.progress.advance(
                    f"{lane}: {contestant.label} on {attempt.task_id}: "
                    f"{attempt.status if ran else 'reused (run by another bout)'}"
                )
        except OverBudget as exc:
            left = [job for job in attempts if id(job) not in ended]
            self.progress.warn(f"{lane}: {exc}: {len(left)} attempt(s) not run")
            for job in left:
                self._not_run(job.task, job.contestant, job.previous, str(exc))

    def _not_run(
        self, task: Task, contestant: Contestant, previous: Attempt | None, reason: str
    ) -> None:
        """Record an attempt the budget kept from starting, in place of none or of an
        ``interrupted`` one; any other record stays (one the race found, or another
        bout's)."""
        path = contestant.path(task)
        with self.store.hold(path):
            current = self.store.read(path, Attempt)
            if current == previous and (
                current is None or current.status == AttemptStatus.INTERRUPTED
            ):
                record = _failed(task, contestant, error=self.budget.not_run(reason))
                self.store.write(
                    path, record.model_copy(update={"status": AttemptStatus.INTERRUPTED})
                )
        self.progress.advance(f"{contestant.label} on {task.id}: not run (budget)")

    def _lost(
        self, task: Task, contestant: Contestant, previous: Attempt | None, error: Exception
    ) -> tuple[Attempt, bool]:
        """Record an attempt whose worker failed before it could record it itself, and
        whether it is a new record; a record stored meanwhile (by the worker before it
        failed, or by another bout) is kept, never overwritten with the failure."""
        lost = f"the executor lost the attempt: {type(error).__name__}: {error}"
        record = _failed(task, contestant, error=lost)
        path = contestant.path(task)
        with self.store.hold(path):
            current = self.store.read(path, Attempt)
            if current is not None and current != previous:
                return current, False
            self.store.write(path, record)
        return record, True

    def claim(
        self,
        task: Task,
        contestant: Contestant,
        checkouts: Checkouts,
        *,
        previous: Attempt | None,
        round_number: int = 1,
        feedback: str = "",
    ) -> tuple[Attempt, bool]:
        """Run one attempt and store it, unless another bout did; ``(record, ran)``. An
        infrastructure failure is recorded, not raised.

        ``previous`` is the record the caller found (``None``: none); when another bout
        (a concurrent sweep job) has replaced it meanwhile, that bout's attempt is returned
        instead of running the agent again (``ran`` is ``False``). A later round
        (``round_number`` > 1) adds ``feedback`` (the review of the previous round) to the
        prompt; the previous round's record is kept beside it.

        Once the stop is requested nothing starts (:class:`Interrupted`). An attempt the
        stop killed is stored as ``interrupted``, to run again; in a later round it is
        not stored, the previous round stays the latest, and :class:`Interrupted` is raised."""
        path = contestant.path(task)
        with self.store.hold(path):
            current = self.store.read(path, Attempt)
            if current is not None and current != previous:
                return current, False
            self.stop.check()
            leftovers = self._leftovers(path)
            leftovers.end()  # what a bugbout that died holding this attempt left running
            record = self._attempt(
                task, contestant, checkouts, round_number, feedback, leftovers=leftovers
            )
            if record.status == AttemptStatus.INTERRUPTED and round_number > 1:
                raise Interrupted(f"{contestant.label} on {task.id}: round {round_number} killed")
            if round_number > 1 and current is not None:
                kept = path.removesuffix(".json") + f".round{round_number - 1}.json"
                self.store.write(kept, current)
            self.store.write(path, record)
        with self._lock:
            self.ran.add(path)
        return record, True

    def _leftovers(self, path: str) -> Leftovers:
        """The record of what the attempt stored at ``path`` started, beside its lock:
        only the bugbout holding the lock writes it, and the next holder reads it."""
        return Leftovers(self.store.root / "locks" / (path.replace("/", "%") + ".leftovers"))

    def _attempt(
        self,
        task: Task,
        contestant: Contestant,
        checkouts: Checkouts,
        round_number: int,
        feedback: str,
        *,
        leftovers: Leftovers,
    ) -> Attempt:
        """One run of the agent, as a record; failures are recorded, not raised. Whatever
        ends after the stop killed the bout's processes is ``interrupted``: nothing of it
        is trusted."""
        record = _failed(task, contestant, round_number=round_number)
        root = (
            self.benches.home
            / "attempts"
            / task.id
            / f"{safe_name(contestant.name)}-{uuid.uuid4().hex[:8]}"
        )
        started_record = record
        try:
            record = run_agent(
                self.spec.attempt,
                self.plugins,
                task,
                contestant,
                checkouts=checkouts,
                root=root,
                record=record,
                feedback=feedback,
                leftovers=leftovers,
            )
        except BugboutError as exc:
            record.error = str(exc)
        except Exception as exc:
            record.error = f"{type(exc).__name__}: {exc}"
            record.summary = traceback.format_exc(limit=5)[-2000:]
        if self.stop.killed:
            return started_record.model_copy(
                update={
                    "status": AttemptStatus.INTERRUPTED,
                    "error": "killed when the bout was stopped; the next run runs it again",
                    "summary": "",
                    "logdir": str(root / "logs"),
                }
            )
        return record


@dataclass(frozen=True)
class _LocalAttempt:
    """An attempt run on this race, in this process (threads)."""

    race: Race
    task: Task
    contestant: Contestant
    previous: Attempt | None
    checkouts: Checkouts

    def __call__(self) -> tuple[Attempt, bool]:
        return self.race.claim(self.task, self.contestant, self.checkouts, previous=self.previous)


@dataclass(frozen=True)
class RemoteAttempt:
    """An attempt run in another process or on another machine (a Ray worker): picklable,
    it ships its spec and rebuilds there the plugins the race uses (``plugins``), then the
    race."""

    spec: AttemptSpec
    plugins: RaceSource
    task: Task
    contestant: Contestant
    previous: Attempt | None

    def __call__(self) -> tuple[Attempt, bool]:
        # under the worker's stop, if the bout's executor installed one: a cancelled
        # attempt is killed and stored as ``interrupted``
        race = Race(RaceSpec(self.spec), self.plugins(), stop=current_stop())
        with Git(race.benches.repository) as git:
            checkouts = race.benches.checkouts(git)
            return race.claim(self.task, self.contestant, checkouts, previous=self.previous)


def to_run(previous: Attempt | None, *, retry_failed: bool) -> bool:
    """Whether an attempt whose stored record is ``previous`` runs (again): none stored,
    ``interrupted``, or one not of the agent's doing with ``run.retry-failed``."""
    return (
        previous is None
        or previous.status == AttemptStatus.INTERRUPTED
        or (previous.status in RETRYABLE and retry_failed)
    )


def race_tasks(tasks: TaskSet, oracles: OracleSet) -> list[Task]:
    """The tasks the contestants race: scored, with ground truth."""
    return [
        task
        for task in tasks.tasks
        if task.scored and (oracle := oracles.root.get(task.id)) and oracle.status == "ok"
    ]


def _failed(
    task: Task, contestant: Contestant, *, round_number: int = 1, error: str | None = None
) -> Attempt:
    """A record of ``contestant``'s attempt on ``task``, started now: an ``infra-error``
    until the attempt says otherwise."""
    return Attempt(
        task_id=task.id,
        contestant=contestant.name,
        role=contestant.role,
        key=contestant.key(task),
        agent=contestant.agent.harness,
        model=contestant.agent.model,
        vendor=contestant.agent.vendor,
        status=AttemptStatus.INFRA_ERROR,
        started=datetime.now(UTC).isoformat(timespec="seconds"),
        round=round_number,
        repeat=contestant.repeat,
        error=error,
    )
