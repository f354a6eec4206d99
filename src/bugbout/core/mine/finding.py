"""Finding the tasks: mine the fixes, give each its issue's text, write ``tasks.json``.

What ``bugbout tasks --mine-only`` runs, without the modules ground truth needs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bugbout import __version__
from bugbout.core.contract.errors import ConfigError, StoreError
from bugbout.core.contract.instances import Instance, instances
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings
from bugbout.core.contract.types import IssueSourcePlugin, MinerPlugin, TestRunnerPlugin
from bugbout.core.mine.injection import SuiteRunner, TestingMiner
from bugbout.core.mine.issues import IssueRequest, IssueResolver, problem_statement
from bugbout.core.mine.mining import Miner, Mining, MiningRequest, head_of
from bugbout.core.mine.reported import Parents, fix_only, is_told_by_failures, told
from bugbout.core.plumbing.git import Git, GitError
from bugbout.core.plumbing.progress import Progress, SilentProgress
from bugbout.core.plumbing.test_runner import TestRunner
from bugbout.core.store.records import TaskSet, digest
from bugbout.core.store.store import MINING, TASKS, Store

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
            if stored:
                mined = stored.mined
            else:
                choice = settings.test_runner
                runner = plugins.create(TestRunnerPlugin, choice.name, choice.options)
                mined = _walk(miner, request, runner, resolver, progress)
            found = _read_issues(git, mined.model_copy(deep=True), request, resolver, progress)
            if key and head_of(miner, request) == head:
                complete = found if not resolver.skipped else None
                store.write(MINING, Mining(key=key, head=head or "", mined=mined, tasks=complete))
    store.write(TASKS, found)
    plugins.notify("bugbout_after_mine", tasks=found)
    warn_problems(plugins, progress)
    return found


MINING_FORMAT = "3"
"""Changes when what mining stores, or a rule of the built-in miner, changes: a result of
another format is not reused (3: forward merges give way to the commits they bring)."""


def mining_key(settings: BoutSettings, plugins: Plugins, request: MiningRequest, head: str) -> str:
    """What determines a mining result: the head of the history walked, the miner's and
    the issue sources' settings and plugins (their distributions and versions), the
    miner's options as it reads them (its defaults too: a changed default is a changed
    rule), the project's settings and bugbout's version."""
    miner = plugins.get(MinerPlugin, settings.miner.name)
    sources = [
        plugins.get(IssueSourcePlugin, source.plugin).distribution
        for source in issue_sources(settings)
    ]
    return digest(
        head,
        request.model_dump_json(),
        settings.model_dump_json(include={"miner", "issue_sources"}),
        miner.spec.parse_options(dict(settings.miner.options)).model_dump_json(),
        miner.distribution,
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
    miner: Miner,
    request: MiningRequest,
    runner: TestRunner,
    resolver: IssueResolver,
    progress: Progress,
) -> TaskSet:
    """What ``miner`` finds with the bout's test ``runner``, asking ``resolver`` the
    titles it looks up."""

    def title_of(number: int) -> str | None:
        issue, source = resolver.resolve(_issue_request(request, number))
        return issue.title if source != "commit" else None

    progress.start(f"mining {request.repository.name}")
    found = miner.mine(request, titles=title_of, runner=runner)
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


@contextmanager
def claimed(store: Store, progress: Progress, sweep: Path | None) -> Iterator[None]:
    """Mining and ground truth on ``store``, one bout at a time: another bugbout doing
    it meanwhile is an error naming it, except for the jobs of one ``sweep`` (its
    directory), which take turns."""
    doing = f"mining or computing ground truth on {store.root}"
    with store.claim("ground-truth", doing, sweep=party_of(sweep), warn=progress.warn):
        yield


def party_of(sweep: Path | None) -> str:
    """The sweep a job belongs to, as its claims and records name it (none: ``""``)."""
    return str(sweep.resolve()) if sweep else ""


def find_tasks(
    settings: BoutSettings,
    plugins: Plugins,
    store: Store,
    progress: Progress | None = None,
    *,
    sweep: Path | None = None,
) -> TaskSet:
    """:func:`mine_tasks` under the store's claim (:func:`claimed`)."""
    progress = progress or SilentProgress()
    with claimed(store, progress, sweep):
        return mine_tasks(settings, plugins, store, progress)


def warn_problems(plugins: Plugins, progress: Progress) -> None:
    """Warn of each problem the plugins met, once."""
    while plugins.problems:
        progress.warn(plugins.problems.pop(0))
