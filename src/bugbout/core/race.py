"""The race: every contestant on every scored task, each attempt in a fresh, history-free
checkout inside a sandbox; whatever changed on disk is its patch.

Attempts are queued in lanes, one per quota: runs sharing a quota take turns (or run
``run.quotas[quota]`` at a time), different quotas run in parallel. The lanes live here,
in the driver; the attempts themselves run on the bout's executor (threads here by
default, or Ray workers), so a quota holds however many workers there are. Each attempt
is written to the store the moment it ends, so a bout can stop anywhere and resume.
"""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import threading
import traceback
import uuid
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bugbout.core.agent_setup import named_files, run_tests_script, start_egress, state_dir
from bugbout.core.agents import Session
from bugbout.core.checkout import Checkouts
from bugbout.core.confine import masked_paths, readable_paths, test_confinement
from bugbout.core.contestants import Contestant, safe_name
from bugbout.core.environment import Environment, EnvironmentBuilder, EnvironmentRequest
from bugbout.core.errors import BugboutError
from bugbout.core.examining import Assignment
from bugbout.core.executor import Executor, make_executor, run_jobs
from bugbout.core.git import Git
from bugbout.core.limits import Guard, LimitExceeded
from bugbout.core.logs import Captures, conclude
from bugbout.core.manager import Plugins, make_plugins
from bugbout.core.patch import apply_patch, diff_trees
from bugbout.core.process import run_logged
from bugbout.core.progress import Progress, SilentProgress
from bugbout.core.records import (
    RETRYABLE,
    Attempt,
    AttemptStatus,
    ChangeArea,
    ChangeKind,
    JobAttempt,
    OracleSet,
    Outcome,
    Patch,
    Task,
    TaskSet,
)
from bugbout.core.repair import with_added
from bugbout.core.settings import BoutSettings
from bugbout.core.stopping import Interrupted, Stop, current_stop
from bugbout.core.store import ORACLES, Store
from bugbout.core.tasks import bugbout_home
from bugbout.core.testmodules import is_test_module
from bugbout.core.testrun import run_tests
from bugbout.core.testtree import fresh_test_tree
from bugbout.sandbox.confinement import Confinement, Sandbox
from bugbout.sandbox.overlay import enter


class Race:
    """Runs the pending attempts of a bout."""

    def __init__(
        self,
        settings: BoutSettings,
        plugins: Plugins,
        store: Store,
        progress: Progress | None = None,
        *,
        executor: Executor | None = None,
        stop: Stop | None = None,
    ) -> None:
        self.settings = settings
        self.plugins = plugins
        self.store = store
        self.progress = progress or SilentProgress()
        self.executor = executor
        """Where attempts run; without one, the settings' executor, for one :meth:`run`."""
        self.stop = stop or Stop(settings.run.grace)
        """The bout's stop: once requested no attempt starts, once killed none is kept."""
        self.home = bugbout_home()
        self.sandbox: Sandbox = plugins.create(
            "sandbox", settings.sandbox.name, settings.sandbox.options
        )
        self.builder: EnvironmentBuilder = plugins.create(
            "env", settings.env.name, settings.env.options
        )
        self.confine_tests = test_confinement(settings, self.sandbox, self.home)
        self._environments: dict[str, Environment] = {}
        self._lock = threading.Lock()
        self.ran: set[str] = set()
        """Paths of the attempts this race ran (the others it found in the store)."""

    def checkouts(self, git: Git) -> Checkouts:
        """The bout's cached trees and working copies, made as ``run.checkouts`` says."""
        return Checkouts(git, self.home / "checkouts", self.settings.run.checkouts)

    def pending(
        self, tasks: TaskSet, oracles: OracleSet, contestants: list[Contestant]
    ) -> Iterator[tuple[Task, Contestant, Attempt | None]]:
        """Every (task, contestant) still to run, new or failed and retried, with the
        record found for it."""
        for task in race_tasks(tasks, oracles):
            for contestant in contestants:
                previous = self.store.read(contestant.path(task), Attempt)
                if (
                    previous is None
                    or previous.status == AttemptStatus.INTERRUPTED
                    or (previous.status in RETRYABLE and self.settings.run.retry_failed)
                ):
                    yield task, contestant, previous

    def job_attempts(
        self, tasks: TaskSet, oracles: OracleSet, contestants: list[Contestant]
    ) -> list[JobAttempt]:
        """Every stored attempt of these contestants on the raced tasks, and whether this
        race ran it or found it in the store."""
        return [
            JobAttempt(
                task_id=task.id,
                contestant=contestant.name,
                path=path,
                reused=path not in self.ran,
            )
            for task in race_tasks(tasks, oracles)
            for contestant in contestants
            if self.store.path(path := contestant.path(task)).exists()
        ]

    def run(
        self, tasks: TaskSet, oracles: OracleSet, contestants: list[Contestant]
    ) -> list[Attempt]:
        """Run every pending attempt, lane by lane; returns the attempts run now. Once
        the stop is requested no attempt starts: those running end, then
        :class:`Interrupted` is raised if some were left."""
        self.stop.check()
        problem = self.sandbox.problem()
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
        executor = self.executor or make_executor(self.settings, self.plugins)
        try:
            attempts = self.stop.executor(executor, "attempt")
            with Git(self.settings.repository) as git:
                checkouts = self.checkouts(git)
                with ThreadPoolExecutor(max_workers=max(len(lanes), 1)) as lanes_pool:
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
        as ``interrupted`` by its worker)."""
        width = self.settings.run.quotas.get(lane, 1)
        attempts: list[_LocalAttempt | RemoteAttempt] = [
            _LocalAttempt(self, task, contestant, previous, checkouts)
            if executor.in_process
            else RemoteAttempt(self.settings, task, contestant, previous)
            for task, contestant, previous in jobs
        ]
        for job, future in run_jobs(executor, attempts, width):
            task, contestant = job.task, job.contestant
            try:
                attempt, ran = future.result()
            except Interrupted:
                continue
            except Exception as exc:  # the worker died: record it, go on
                attempt, ran = self._lost(task, contestant, job.previous, exc)
            if ran:
                with self._lock:
                    self.ran.add(contestant.path(task))
                    finished.append(attempt)
            self.progress.advance(
                f"{lane}: {attempt.contestant} on {attempt.task_id}: "
                f"{attempt.status if ran else 'reused (run by another bout)'}"
            )

    def _lost(
        self, task: Task, contestant: Contestant, previous: Attempt | None, error: Exception
    ) -> tuple[Attempt, bool]:
        """Record an attempt whose worker failed before it could record it itself, and
        whether it is a new record; a record stored meanwhile (by the worker before it
        failed, or by another bout) is kept, never overwritten with the failure."""
        record = Attempt(
            task_id=task.id,
            contestant=contestant.name,
            role=contestant.role,
            key=contestant.key(task),
            agent=contestant.agent.harness,
            model=contestant.agent.model,
            vendor=contestant.agent.vendor,
            status=AttemptStatus.INFRA_ERROR,
            started=datetime.now(UTC).isoformat(timespec="seconds"),
            error=f"the executor lost the attempt: {type(error).__name__}: {error}",
        )
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
            record = self._attempt(task, contestant, checkouts, round_number, feedback)
            if record.status == AttemptStatus.INTERRUPTED and round_number > 1:
                raise Interrupted(f"{contestant.name} on {task.id}: round {round_number} killed")
            if round_number > 1 and current is not None:
                kept = path.removesuffix(".json") + f".round{round_number - 1}.json"
                self.store.write(kept, current)
            self.store.write(path, record)
        with self._lock:
            self.ran.add(path)
        return record, True

    def _attempt(
        self,
        task: Task,
        contestant: Contestant,
        checkouts: Checkouts,
        round_number: int,
        feedback: str,
    ) -> Attempt:
        """One run of the agent, as a record; failures are recorded, not raised. Whatever
        ends after the stop killed the bout's processes is ``interrupted``: nothing of it
        is trusted."""
        started = datetime.now(UTC).isoformat(timespec="seconds")
        record = Attempt(
            task_id=task.id,
            contestant=contestant.name,
            role=contestant.role,
            key=contestant.key(task),
            agent=contestant.agent.harness,
            model=contestant.agent.model,
            vendor=contestant.agent.vendor,
            status=AttemptStatus.INFRA_ERROR,
            started=started,
            round=round_number,
        )
        root = (
            self.home
            / "attempts"
            / task.id
            / f"{safe_name(contestant.name)}-{uuid.uuid4().hex[:8]}"
        )
        started_record = record
        try:
            record = self._run(task, contestant, checkouts, root, record, feedback=feedback)
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

    def _run(
        self,
        task: Task,
        contestant: Contestant,
        checkouts: Checkouts,
        root: Path,
        record: Attempt,
        *,
        feedback: str,
    ) -> Attempt:
        logdir, agent_home = root / "logs", root / "home"
        for directory in (logdir, agent_home):
            directory.mkdir(parents=True)
        base = checkouts.base(task.parent)
        copy = checkouts.attempt_copy(
            task.parent, root, overlay=getattr(self.sandbox, "overlays", True)
        )
        workdir = copy.tree
        environment = self.environment(task, checkouts)
        test_command = run_tests_script(self.settings.project, environment, workdir, logdir)
        prompt = contestant.prompt(
            task, tests=self.settings.project.tests, test_command=test_command
        ) + (f"\n{feedback}" if feedback else "")
        prompt_file = logdir / "prompt.md"
        prompt_file.write_text(prompt)
        agent = contestant.agent
        state_dirs = tuple(state_dir(entry, agent_home) for entry in agent.options.state_dirs)
        for directory in state_dirs:
            directory.mkdir(parents=True, exist_ok=True)
        confinement = Confinement(
            workdir=workdir,
            writable=(logdir, agent_home, *state_dirs),
            readable=readable_paths(
                [environment.command([], workdir, []).argv[0], agent.executable]
            ),
            masked=masked_paths(self.settings, self.home),
        )
        session = Session(
            prompt=prompt,
            workdir=workdir,
            logdir=logdir,
            home=agent_home,
            sandbox=self.sandbox,
            confinement=confinement,
            prompt_file=prompt_file,
            test_command=test_command,
        )
        invocation = agent.invocation(session)
        confinement = confinement.model_copy(
            update={
                "readable": (
                    *confinement.readable,
                    *named_files(invocation.argv, masked_paths(self.settings, self.home)),
                )
            }
        )
        env = {**agent.environment(session), **invocation.env}
        argv = invocation.argv
        with contextlib.ExitStack() as stack:
            if invocation.confined and invocation.endpoints and self.sandbox.name != "none":
                argv, extra, folder = start_egress(invocation.endpoints, argv, stack)
                env.update(extra)
                confinement = confinement.model_copy(
                    update={"readable": (*confinement.readable, folder)}
                )
            limits = self.settings.limits
            if invocation.confined:
                argv = self.sandbox.wrap(
                    argv, confinement.model_copy(update={"tmp_size": limits.tmp})
                )
            if copy.overlay is not None:
                argv = enter(copy.overlay, argv)
            guard = Guard(limits, (copy.changes, *confinement.writable), root / "limits.json")
            captures = Captures(root / "streams").create()  # out of the agent's sight
            ended = run_logged(
                guard.wrap(argv),
                cwd=workdir,
                env=env,
                stdin=invocation.stdin,
                timeout=self.settings.run.timeout,
                stdout=captures.stdout,
                stderr=captures.stderr,
                limit=self.settings.run.log_limit,
            )
        tampered = captures.publish(logdir)  # the agent has stopped: nothing can replace them
        breach = guard.breach()
        try:
            patch = diff_trees(
                base, copy.changes, source=self.settings.project.source,
                tests=self.settings.project.tests, limits=limits, upper=copy.overlay is not None,
            )  # fmt: skip
        except LimitExceeded as exc:
            patch, breach = Patch(), breach or str(exc)
        except (PermissionError, UnicodeError, ValueError) as exc:  # what the agent left
            patch, breach = Patch(), breach or f"its working copy cannot be read: {exc}"
        ending = conclude(
            agent, logdir, ended, empty_patch=patch.empty, tampered=tampered or breach
        )
        if ending.status == AttemptStatus.AGENT_ERROR and _vanished(agent.executable):
            ending = dataclasses.replace(
                ending,
                status=AttemptStatus.INFRA_ERROR,
                error=f"its program {agent.executable!r} is no longer installed",
            )  # the machine's doing, as for every agent kind: --retry-failed runs it again
        shutil.rmtree(agent_home, ignore_errors=True)
        if contestant.assignment is not None:
            record = self._validate(
                task=task,
                assignment=contestant.assignment,
                patch=patch,
                checkouts=checkouts,
                environment=environment,
                root=root,
                record=record,
            )
        return record.model_copy(
            update={
                "status": ending.status,
                "patch": patch,
                "summary": ending.summary,
                "usage": ending.usage,
                "wall_time": round(ended.duration, 3),
                "exit_code": ended.exit_code,
                "logdir": str(logdir),
                "error": ending.error,
            }
        )

    def _validate(
        self,
        *,
        task: Task,
        assignment: Assignment,
        patch: Patch,
        checkouts: Checkouts,
        environment: Environment,
        root: Path,
        record: Attempt,
    ) -> Attempt:
        """Run an examiner's tests on the unfixed code: a reproduction must fail there."""
        modules = [
            change.path
            for change in patch.area(ChangeArea.TEST)
            if change.kind != ChangeKind.DELETED and is_test_module(change.path)
        ]
        update: dict[str, object] = {"assignment": assignment.name}
        if modules:
            tree = fresh_test_tree(checkouts, task.parent, root / "unfixed")
            apply_patch(tree, patch.tests)
            run = run_tests(
                environment,
                tree,
                modules,
                project=self.settings.project,
                label="unfixed",
                timeout=self.settings.tasks.timeout,
                confine=self.confine_tests,
            )
            failing = sorted(
                n for n, o in run.outcomes.items() if o in (Outcome.FAILED, Outcome.ERROR)
            )
            passing = sorted(n for n, o in run.outcomes.items() if o == Outcome.PASSED)
            update |= {
                "validation": run,
                "reproductions": failing,
                "rejected_tests": passing if assignment.must_fail_on_base() else [],
            }
        return record.model_copy(update=update)

    def environment(self, task: Task, checkouts: Checkouts) -> Environment:
        """The task's test environment (the oracle's, with what it added), built once per
        bout."""
        with self._lock:
            if task.id not in self._environments:
                oracles = self.store.read(ORACLES, OracleSet) or OracleSet()
                oracle = oracles.root.get(task.id)
                request = EnvironmentRequest(
                    project=with_added(self.settings.project, oracle.added if oracle else []),
                    tree=checkouts.base(task.sha),
                    date=task.date,
                    home=self.home,
                )
                self._environments[task.id] = self.builder.build(request)
            return self._environments[task.id]


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
    it rebuilds the plugins and the race there from the bout's settings. The worker must
    see the repository, the store and ``BUGBOUT_HOME`` at the same paths."""

    settings: BoutSettings
    task: Task
    contestant: Contestant
    previous: Attempt | None

    def __call__(self) -> tuple[Attempt, bool]:
        # under the worker's stop, if the bout's executor installed one: a cancelled
        # attempt is killed and stored as ``interrupted``
        race = Race(
            self.settings, make_plugins(), Store(self.settings.store_dir), stop=current_stop()
        )
        with Git(self.settings.repository) as git:
            checkouts = race.checkouts(git)
            return race.claim(self.task, self.contestant, checkouts, previous=self.previous)


def race_tasks(tasks: TaskSet, oracles: OracleSet) -> list[Task]:
    """The tasks the contestants race: scored, with ground truth."""
    return [
        task
        for task in tasks.tasks
        if task.scored and (oracle := oracles.root.get(task.id)) and oracle.status == "ok"
    ]


def _vanished(program: str | None) -> bool:
    """Whether an agent's program is missing from this machine now (it was there when the
    bout checked before racing)."""
    return bool(program) and shutil.which(program or "") is None
