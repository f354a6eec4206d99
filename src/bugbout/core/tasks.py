"""Ground truth of the mined tasks (:mod:`bugbout.core.mine.finding` mines them): each
task's oracle, computed or reused, and its statement told."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from bugbout.core.contract.errors import BugboutError
from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import DEFAULT_TEST_RUNNER, TasksSettings
from bugbout.core.mine.drafting import Drafter
from bugbout.core.mine.finding import warn_problems
from bugbout.core.mine.statements import tell_statements
from bugbout.core.plumbing.runtime.executor import Executor, run_jobs
from bugbout.core.plumbing.runtime.progress import Progress, SilentProgress
from bugbout.core.plumbing.runtime.stopping import Interrupted, stopping
from bugbout.core.plumbing.tools import Benches, BenchSpec
from bugbout.core.store.records import Oracle, OracleSet, Task, TaskSet, digest
from bugbout.core.store.store import ORACLES, TASKS, Store

METHOD = 2
"""How ground truth is computed, in every oracle's key: an oracle computed otherwise (1:
the before tree ran once, so a test flaky before the fix could pass for fixed) is computed
again."""


@dataclass(frozen=True)
class TruthSpec:
    """What ground truth reads of the bout's settings: what a task's test bench is made
    from, and ``tasks:``."""

    bench: BenchSpec
    tasks: TasksSettings

    def key(self, task_sha: str) -> str:
        """What determines a task's oracle: the fix, the environment, how the tests run (the
        test runner too, when it is not the default: the keys of oracles computed before
        runners were plugins stay the same)."""
        runner = self.bench.test_runner
        default = runner == DEFAULT_TEST_RUNNER
        return digest(
            task_sha,
            self.bench.environment.model_dump_json(),
            self.bench.project.model_dump_json(exclude={"github", "repository"}),
            str(self.tasks.reruns),
            f"repair-imports={self.tasks.repair_imports}",
            f"method={METHOD}",
            *([] if default else [f"test-runner={runner.model_dump_json()}"]),
        )


@dataclass(frozen=True)
class TruthPlugins:
    """The plugin implementations ground truth uses, made by the pipeline: the bout's
    benches (made when a job runs in this process), the revision of the environment
    builder (``built_by``: an oracle of another is kept if its environment resolves
    alike), the executor (made when one is needed), the drafter of statements (``None``:
    scrubbed ones), the lifecycle hooks (``notify``) and the problems the plugins met
    (``problems``, warned of once)."""

    benches: Callable[[], Benches]
    built_by: str
    executor: Callable[[], Executor]
    drafter: Callable[[], Drafter | None]
    notify: Callable[..., None]
    problems: list[str]


def compute_truth(
    spec: TruthSpec,
    plugins: TruthPlugins,
    store: Store,
    tasks: TaskSet,
    progress: Progress | None = None,
    *,
    executor: Executor | None = None,
    sweep: str = "",
    computed: set[str] | None = None,
) -> OracleSet:
    """Compute (or reuse) every task's oracle, ``tasks.jobs`` at a time on ``executor``
    (the bout's own when not given); ``oracles.json`` is written after each task, so an
    interrupted run loses at most the tasks in flight. An environment error is tried
    again on every run, but once per ``sweep`` (its directory): its later jobs take the
    first one's. ``computed`` receives the id of each task whose oracle was computed.
    Then each task's statement is told."""
    progress = progress or SilentProgress()
    plugins.notify("bugbout_before_truth", tasks=tasks)
    warn_problems(plugins.problems, progress)
    oracles = store.read(ORACLES, OracleSet) or OracleSet()
    todo: list[tuple[Task, str, Oracle | None]] = []
    built_by = plugins.built_by
    for task in tasks.tasks:
        key = spec.key(task.sha)
        oracle = oracles.root.get(task.id)
        if oracle is None or oracle.key != key or _try_again(oracle, sweep):
            todo.append((task, key, None))
        elif oracle.revision != built_by:  # kept if its environment resolves alike now
            todo.append((task, key, oracle))
    progress.start("computing ground truth", total=len(tasks.tasks))
    computing = {task.id for task, _, _ in todo}
    for task in tasks.tasks:
        if task.id not in computing:
            progress.advance(f"{task.id} {oracles.root[task.id].status}")
    if todo:
        own = executor is None
        executor = executor or plugins.executor()
        try:
            local = plugins.benches() if executor.in_process else None
            for oracle in _dispatch(spec, local, executor, todo):
                if oracle.status == "environment-error" and stopping():
                    continue  # perhaps the signal's doing (it reaches uv too): not kept
                oracles.root[oracle.task_id] = oracle.model_copy(update={"sweep": sweep})
                store.write(ORACLES, oracles)
                if computed is not None:
                    computed.add(oracle.task_id)
                plugins.notify("bugbout_after_oracle", oracle=oracle)
                warn_problems(plugins.problems, progress)
                progress.advance(f"{oracle.task_id} {oracle.status}")
        finally:
            if own:
                executor.close()
        if stopping():
            raise Interrupted("stopped by a signal")  # an oracle left out above is missing
    for task in tasks.tasks:
        oracle = oracles.root[task.id]
        _score(task, oracle)
        if oracle.status == "environment-error":
            progress.warn(f"task {task.id}: environment error: {oracle.reason}")
    # the statements are not part of the oracle's key: they are made from the oracle
    tell_statements(
        spec.bench.repository, store, tasks, oracles,
        drafter=plugins.drafter(), jobs=spec.tasks.jobs, warn=progress.warn,
    )  # fmt: skip
    progress.finish()
    store.write(TASKS, tasks)
    plugins.notify("bugbout_after_truth", tasks=tasks, oracles=oracles)
    warn_problems(plugins.problems, progress)
    return oracles


def _try_again(oracle: Oracle, sweep: str) -> bool:
    """Whether a stored oracle of the same key is computed again: an environment error
    (its cause may be fixed by now), unless a job of this same sweep computed it."""
    return oracle.status == "environment-error" and not (sweep and oracle.sweep == sweep)


def _dispatch(
    spec: TruthSpec,
    local: Benches | None,
    executor: Executor,
    todo: list[tuple[Task, str, Oracle | None]],
) -> Iterator[Oracle]:
    """Compute the oracles of ``todo``, ``tasks.jobs`` at a time, on ``local`` benches
    when the executor runs jobs here; each as it is done."""
    from bugbout.core.plumbing.testruns.unstarted import TestRunNotStarted

    local = _confining(local) if local is not None else None
    jobs = [OracleJob(spec, task, key, local, stored) for task, key, stored in todo]
    for job, future in run_jobs(executor, jobs, spec.tasks.jobs):
        try:
            yield future.result()
        except TestRunNotStarted as exc:  # infrastructure: tried again next run
            yield Oracle(
                task_id=job.task.id, key=job.key, status="environment-error", reason=str(exc)
            )
        except Exception as exc:  # the worker died: an environment error, tried again next run
            yield Oracle(
                task_id=job.task.id,
                key=job.key,
                status="environment-error",
                reason=f"the executor lost it: {type(exc).__name__}: {exc}",
            )


def _confining(tools: Benches) -> Benches:
    """``tools``, once their sandbox can confine the tests here."""
    problem = tools.sandbox.problem()
    if problem:
        raise BugboutError(f"tests cannot run confined: {problem}")
    return tools


@dataclass(frozen=True)
class OracleJob:
    """One task's ground truth. Run in this process it uses the bout's benches
    (``tools``); sent to another process (a Ray worker) it is picklable, ships its spec
    and rebuilds its benches there from it."""

    spec: TruthSpec
    task: Task
    key: str
    tools: Benches | None = None
    stored: Oracle | None = None
    """Its oracle of another environment revision, kept if its environment is the same."""

    def __call__(self) -> Oracle:
        from bugbout.core.plumbing.trees.git import Git
        from bugbout.core.truth.oracle import compute_oracle

        bench = self.spec.bench
        tools = self.tools or _confining(
            Benches.make(bench, make_plugins(), Store(bench.store_dir))
        )
        with Git(tools.repository) as git:
            return compute_oracle(
                self.task,
                git=git,
                builder=tools.environments.builder,
                runner=tools.runner,
                project=self.spec.bench.project,
                tasks=self.spec.tasks,
                home=tools.home,
                key=self.key,
                confine=tools.confine,
                stored=self.stored,
            )


def _score(task: Task, oracle: Oracle) -> None:
    """A task is scored only when its ground truth has a fail-to-pass test."""
    task.scored = oracle.status == "ok"
    task.reason = None if task.scored else oracle.reason
