"""Finding the tasks: mine the fixes, give each its issue's text, write ``tasks.json``.

What ``bugbout tasks --mine-only`` runs, without the modules ground truth needs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeGuard

from bugbout.core.contract.errors import ConfigError, StoreError
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.mine.issues import IssueRequest, IssueResolver, problem_statement
from bugbout.core.mine.mining import Miner, Mining, MiningRequest, head_of
from bugbout.core.mine.reported import Parents, is_told_by_failures, told
from bugbout.core.mine.spec import MinePlugins, MineSpec
from bugbout.core.plumbing.runtime.progress import Progress, SilentProgress
from bugbout.core.plumbing.trees.git import Git, GitError
from bugbout.core.store.records import TaskSet
from bugbout.core.store.store import MINING, TASKS, Store

if TYPE_CHECKING:
    from bugbout.core.mine.injection import TestingMiner
    from bugbout.core.plumbing.testruns.test_runner import TestRunner

_GITHUB_REMOTE = re.compile(r"github\.com[:/]([\w.-]+/[\w.-]+?)(?:\.git)?/?$")


def github_slug(project: ProjectSettings, git: Git) -> str | None:
    """``owner/name`` on GitHub: configured, or read from the ``origin`` remote."""
    if project.github:
        return project.github
    try:
        url = git.run("remote", "get-url", "origin").strip()
    except GitError:
        return None
    match = _GITHUB_REMOTE.search(url)
    return match.group(1) if match else None


def mine(
    spec: MineSpec, plugins: MinePlugins, store: Store, progress: Progress | None = None
) -> TaskSet:
    """Mine the repository, give each task its issue's text, and write ``tasks.json``. A
    mining stored under the same key (:meth:`MineSpec.key`) is reused: its tasks, or, when
    an issue source did not answer then, what the miner found, whose issues are read
    again."""
    progress = progress or SilentProgress()
    store.set_aside_if_corrupt(TASKS, TaskSet, progress.warn)
    repository = spec.repository
    with Git(repository) as git:
        if not git.is_repository():
            raise ConfigError(
                f"{repository} is not a git repository; set project.repository in bugbout.yaml"
            )
        plugins.notify("bugbout_before_mine", repository=repository)
        miner = plugins.miner
        request = MiningRequest(
            repository=repository,
            project=spec.project,
            github=github_slug(spec.project, git),
            test_runner=spec.test_runner,
        )
        head = head_of(miner, request)
        key = spec.key(request, head, plugins.made_by) if head else ""
        stored = _stored(store, key, progress) if key else None
        if stored is not None and stored.tasks is not None:
            found = stored.tasks
        elif _runs_tests(miner):  # its tasks name no issue: it writes their text
            found = miner.mine_tested(request, plugins.suite(), progress)
        else:
            resolver = IssueResolver(plugins.sources(), warn=progress.warn)
            if stored:
                mined = stored.mined
            else:
                mined = _walk(miner, request, plugins.runner(), resolver, progress)
            found = _read_issues(git, mined.model_copy(deep=True), request, resolver, progress)
            if key and head_of(miner, request) == head:
                complete = found if not resolver.skipped else None
                store.write(MINING, Mining(key=key, head=head or "", mined=mined, tasks=complete))
    store.write(TASKS, found)
    plugins.notify("bugbout_after_mine", tasks=found)
    warn_problems(plugins.problems, progress)
    return found


def _runs_tests(miner: Miner) -> TypeGuard[TestingMiner]:
    """Whether ``miner`` runs the suite to mine: the modules of test runs are imported
    only when a mining is not reused."""
    from bugbout.core.mine.injection import TestingMiner

    return isinstance(miner, TestingMiner)


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
            task.problem_statement = told(git, task, parents=parents)
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
            task.problem_statement = told(git, task, parents=parents)
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


def warn_problems(problems: list[str], progress: Progress) -> None:
    """Warn of each of the plugins' ``problems``, once."""
    while problems:
        progress.warn(problems.pop(0))
