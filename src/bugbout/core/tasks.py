"""The task pipeline: mine the fixes, find their issues, compute their ground truth."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bugbout import __version__
from bugbout.core.contract.errors import BugboutError, ConfigError, StoreError
from bugbout.core.contract.instances import Instance, instances
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings
from bugbout.core.contract.types import (
    EnvironmentPlugin,
    IssueSourcePlugin,
    MinerPlugin,
    SandboxPlugin,
)
from bugbout.core.mine.drafting import Drafter
from bugbout.core.mine.injection import SuiteRunner, TestingMiner
from bugbout.core.mine.issues import IssueRequest, IssueResolver, problem_statement
from bugbout.core.mine.mining import Miner, Mining, MiningRequest, head_of
from bugbout.core.mine.reported import Parents, fix_only, is_told_by_failures, told
from bugbout.core.mine.statements import tell_statements
from bugbout.core.plumbing.executor import Executor, make_executor, run_jobs
from bugbout.core.plumbing.git import Git, GitError
from bugbout.core.plumbing.progress import Progress, SilentProgress
from bugbout.core.plumbing.stopping import Interrupted, stopping
from bugbout.core.plumbing.tools import Tools
from bugbout.core.plumbing.unstarted import TestRunNotStarted
from bugbout.core.store.records import Oracle, OracleSet, Task, TaskSet, digest
from bugbout.core.store.store import MINING, ORACLES, TASKS, Store
from bugbout.core.truth.oracle import METHOD, compute_oracle

_GITHUB_REMOTE = re.compile(r"github\.com[:/]([\w.-]+/[\w.-]+?)(?:\.git)?/?$")


def github_slug(settings: BoutSettings, git: Git) -> str | None:
    """``owner/name`` on GitHub: configured, or read from the ``origin`` remote."""
    if settings.project.github:
        return settings.project.github
    try:
        url = git.run("remote", "get-url", "origin").strip()
    except GitError:
        return None
    match = _GITHUB_REMOTE.search(url)
    return match.group(1) if match else None


def check_plugins(settings: BoutSettings, plugins: Plugins) -> None:
    """Fail before any work when a selected plugin is missing or its options are wrong."""
    plugins.get(MinerPlugin, settings.miner.name).spec.parse_options(settings.miner.options)
    plugins.get(EnvironmentPlugin, settings.environment.name).spec.parse_options(
        settings.environment.options
    )
    plugins.get(SandboxPlugin, settings.sandbox.name).spec.parse_options(settings.sandbox.options)
    for source in issue_sources(settings):
        source.check(plugins, IssueSourcePlugin)
    if settings.tasks.statement == "drafted":
        Drafter.of(settings, plugins)


def issue_sources(settings: BoutSettings) -> list[Instance]:
    """The entries of ``issue-sources``, in the order they are asked."""
    return instances("issue-sources", IssueSourcePlugin.kind, settings.issue_sources)


def issue_resolver(settings: BoutSettings, plugins: Plugins, progress: Progress) -> IssueResolver:
    """The configured issue sources, asked in order, each by its entry's name."""
    sources = [
        (source.name, source.build(plugins, IssueSourcePlugin))
        for source in issue_sources(settings)
    ]
    return IssueResolver(sources, warn=progress.warn)


def mine_tasks(
    settings: BoutSettings, plugins: Plugins, store: Store, progress: Progress | None = None
) -> TaskSet:
    """Mine the repository, give each task its issue's text, and write ``tasks.json``. A
    mining stored under the same key (:func:`mining_key`) is reused: its tasks, or, when
    an issue source did not answer then, what the miner found, whose issues are read
    again."""
    progress = progress or SilentProgress()
    store.set_aside_if_corrupt(TASKS, TaskSet, progress.warn)
    repository = settings.repository
    with Git(repository) as git:
        if not git.is_repository():
            raise ConfigError(
                f"{repository} is not a git repository; set project.repository in bugbout.yaml"
            )
        plugins.notify("bugbout_before_mine", repository=repository)
        miner: Miner = plugins.create(MinerPlugin, settings.miner.name, settings.miner.options)
        request = MiningRequest(
            repository=repository,
            project=settings.project,
            github=github_slug(settings, git),
            test_runner=settings.test_runner,
        )
        head = head_of(miner, request)
        key = mining_key(settings, plugins, request, head) if head else ""
        stored = _stored(store, key, progress) if key else None
        if stored is not None and stored.tasks is not None:
            found = stored.tasks
        elif isinstance(miner, TestingMiner):  # its tasks name no issue: it writes their text
            found = miner.mine_tested(request, SuiteRunner.of(settings, plugins), progress)
        else:
            resolver = issue_resolver(settings, plugins, progress)
            mined = stored.mined if stored else _walk(miner, request, resolver, progress)
            found = _read_issues(git, mined.model_copy(deep=True), request, resolver, progress)
            if key and head_of(miner, request) == head:
                complete = found if not resolver.skipped else None
                store.write(MINING, Mining(key=key, head=head or "", mined=mined, tasks=complete))
    store.write(TASKS, found)
    plugins.notify("bugbout_after_mine", tasks=found)
    _report_problems(plugins, progress)
    return found


MINING_FORMAT = "1"
"""Changes when what mining stores changes: a result of another format is not reused."""


def mining_key(settings: BoutSettings, plugins: Plugins, request: MiningRequest, head: str) -> str:
    """What determines a mining result: the head of the history walked, the miner's and
    the issue sources' settings and plugins (their distributions and versions), the
    project's settings and bugbout's version."""
    sources = [
        plugins.get(IssueSourcePlugin, source.plugin).distribution
        for source in issue_sources(settings)
    ]
    return digest(
        head,
        request.model_dump_json(),
        settings.model_dump_json(include={"miner", "issue_sources"}),
        plugins.get(MinerPlugin, settings.miner.name).distribution,
        *sources,
        f"bugbout={__version__}",
        f"format={MINING_FORMAT}",
    )


def _stored(store: Store, key: str, progress: Progress) -> Mining | None:
    """The mining stored under ``key``, or ``None``; a corrupt record is set aside."""
    try:
        stored = store.read(MINING, Mining)
    except StoreError:  # read once; only a corrupt record is read again, to set it aside
        store.set_aside_if_corrupt(MINING, Mining, progress.warn)
        return None
    if stored is None or stored.key != key:
        return None
    progress.start(f"reused mining of {stored.head[:12]}")
    progress.finish()
    return stored


def _issue_request(request: MiningRequest, number: int, message: str = "") -> IssueRequest:
    return IssueRequest(
        number=number, repository=request.repository, github=request.github, commit_message=message
    )


def _walk(
    miner: Miner, request: MiningRequest, resolver: IssueResolver, progress: Progress
) -> TaskSet:
    """What ``miner`` finds, asking ``resolver`` the titles it looks up."""

    def title_of(number: int) -> str | None:
        issue, source = resolver.resolve(_issue_request(request, number))
        return issue.title if source != "commit" else None

    progress.start(f"mining {request.repository.name}")
    found = miner.mine(request, titles=title_of)
    progress.finish()
    return found


def _read_issues(
    git: Git, found: TaskSet, request: MiningRequest, resolver: IssueResolver, progress: Progress
) -> TaskSet:
    """``found``, each task given its issue's text (one that names none, its scrubbed
    message); a newer fix of an issue wins."""
    progress.start("reading issues", total=len(found.tasks))
    claimed: set[int] = set()
    parents = Parents(git)
    for task in list(found.tasks):
        if is_told_by_failures(task):  # its failures are told once ground truth ran
            task.problem_statement = told(git, task, fix=fix_only(git, task, parents))
            progress.advance(task.id)
            continue
        message = git.message(task.sha)
        issue, source = resolver.resolve(_issue_request(request, task.issue.number, message))
        task.issue.title = issue.title
        task.issue.url = issue.url or task.issue.url
        task.issue.source = source
        if issue.number != task.issue.number:  # a pull request that closed this issue
            task.issue.number = issue.number
        if task.issue.number in claimed:  # a newer fix of the same issue is a task
            found.tasks.remove(task)
            found.exclude("duplicate-issue")
            continue
        claimed.add(task.issue.number)
        # no source knew it: the fix's own message, which may say how, is not told as is
        known = not is_told_by_failures(task)
        if known:
            task.problem_statement = problem_statement(issue)
        else:
            task.problem_statement = told(git, task, fix=fix_only(git, task, parents))
        progress.advance(f"#{task.issue.number}")
    progress.finish()
    return found


def oracle_key(settings: BoutSettings, task_sha: str) -> str:
    """What determines a task's oracle: the fix, the environment, how the tests run (the
    test runner too, when it is not the default: the keys of oracles computed before
    runners were plugins stay the same)."""
    runner = settings.test_runner
    default = runner == BoutSettings.model_fields["test_runner"].default
    return digest(
        task_sha,
        settings.environment.model_dump_json(),
        settings.project.model_dump_json(exclude={"github", "repository"}),
        str(settings.tasks.reruns),
        f"repair-imports={settings.tasks.repair_imports}",
        f"method={METHOD}",
        *([] if default else [f"test-runner={runner.model_dump_json()}"]),
    )


def compute_oracles(
    settings: BoutSettings,
    plugins: Plugins,
    store: Store,
    tasks: TaskSet,
    progress: Progress | None = None,
    *,
    executor: Executor | None = None,
    sweep: str = "",
    computed: set[str] | None = None,
) -> OracleSet:
    """Compute (or reuse) every task's oracle, ``tasks.jobs`` at a time on ``executor``
    (the settings' own when not given); ``oracles.json`` is written after each task, so an
    interrupted run loses at most the tasks in flight. An environment error is tried
    again on every run, but once per ``sweep`` (its directory): its later jobs take the
    first one's. ``computed`` receives the id of each task whose oracle was computed."""
    progress = progress or SilentProgress()
    plugins.notify("bugbout_before_truth", tasks=tasks)
    _report_problems(plugins, progress)
    oracles = store.read(ORACLES, OracleSet) or OracleSet()
    todo: list[tuple[Task, str]] = []
    for task in tasks.tasks:
        key = oracle_key(settings, task.sha)
        oracle = oracles.root.get(task.id)
        if oracle is None or oracle.key != key or _try_again(oracle, sweep):
            todo.append((task, key))
    progress.start("computing ground truth", total=len(tasks.tasks))
    computing = {task.id for task, _ in todo}
    for task in tasks.tasks:
        if task.id not in computing:
            progress.advance(f"{task.id} {oracles.root[task.id].status}")
    if todo:
        own = executor is None
        executor = executor or make_executor(settings, plugins)
        try:
            for oracle in _dispatch(settings, plugins, store, executor, todo):
                if oracle.status == "environment-error" and stopping():
                    continue  # perhaps the signal's doing (it reaches uv too): not kept
                oracles.root[oracle.task_id] = oracle.model_copy(update={"sweep": sweep})
                store.write(ORACLES, oracles)
                if computed is not None:
                    computed.add(oracle.task_id)
                plugins.notify("bugbout_after_oracle", oracle=oracle)
                _report_problems(plugins, progress)
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
    tell_statements(settings, plugins, store, tasks, oracles, warn=progress.warn)
    progress.finish()
    store.write(TASKS, tasks)
    plugins.notify("bugbout_after_truth", tasks=tasks, oracles=oracles)
    _report_problems(plugins, progress)
    return oracles


def _try_again(oracle: Oracle, sweep: str) -> bool:
    """Whether a stored oracle of the same key is computed again: an environment error
    (its cause may be fixed by now), unless a job of this same sweep computed it."""
    return oracle.status == "environment-error" and not (sweep and oracle.sweep == sweep)


def _dispatch(
    settings: BoutSettings,
    plugins: Plugins,
    store: Store,
    executor: Executor,
    todo: list[tuple[Task, str]],
) -> Iterator[Oracle]:
    """Compute the oracles of ``todo``, ``tasks.jobs`` at a time; each as it is done."""
    local = _confining(Tools.build(settings, plugins, store)) if executor.in_process else None
    jobs = [OracleJob(settings, task, key, local) for task, key in todo]
    for job, future in run_jobs(executor, jobs, settings.tasks.jobs):
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


def _confining(tools: Tools) -> Tools:
    """``tools``, once their sandbox can confine the tests here."""
    problem = tools.sandbox.problem()
    if problem:
        raise BugboutError(f"tests cannot run confined: {problem}")
    return tools


@dataclass(frozen=True)
class OracleJob:
    """One task's ground truth. Run in this process it uses the bout's ``tools``; sent to
    another process (a Ray worker) it is picklable and rebuilds them there."""

    settings: BoutSettings
    task: Task
    key: str
    tools: Tools | None = None

    def __call__(self) -> Oracle:
        tools = self.tools or _confining(Tools.in_worker(self.settings))
        with Git(self.settings.repository) as git:
            return compute_oracle(
                self.task,
                git=git,
                builder=tools.environments.builder,
                runner=tools.runner,
                settings=self.settings,
                home=tools.home,
                key=self.key,
                confine=tools.confine,
            )


def ground_truth(
    settings: BoutSettings,
    plugins: Plugins,
    store: Store,
    progress: Progress | None = None,
    *,
    executor: Executor | None = None,
    sweep: Path | None = None,
    mine_only: bool = False,
    computed: set[str] | None = None,
) -> tuple[TaskSet, OracleSet]:
    """Mine the tasks and compute their oracles (``mine_only``: only mine; the oracles
    are those stored), one bout at a time on a store: another bugbout doing it
    meanwhile is an error naming it, except for the jobs of one ``sweep`` (its
    directory), which take turns: the first computes, the others find its records and
    reuse them (an environment error too). ``computed`` receives the id of each task
    whose oracle was computed now."""
    progress = progress or SilentProgress()
    doing = f"mining or computing ground truth on {store.root}"
    party = str(sweep.resolve()) if sweep else ""
    with store.claim("ground-truth", doing, sweep=party, warn=progress.warn):
        tasks = mine_tasks(settings, plugins, store, progress)
        if mine_only:
            return tasks, store.read(ORACLES, OracleSet) or OracleSet()
        oracles = compute_oracles(
            settings, plugins, store, tasks, progress,
            executor=executor, sweep=party, computed=computed,
        )  # fmt: skip
    return tasks, oracles


def _report_problems(plugins: Plugins, progress: Progress) -> None:
    while plugins.problems:
        progress.warn(plugins.problems.pop(0))


def _score(task: Task, oracle: Oracle) -> None:
    """A task is scored only when its ground truth has a fail-to-pass test."""
    task.scored = oracle.status == "ok"
    task.reason = None if task.scored else oracle.reason
