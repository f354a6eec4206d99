"""The conformance suite of miners, and the fixed-bug repository the suites mine."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pytest

from bugbout.core.store.records import TaskSet
from bugbout.testing.suites.base import PluginSuite

if TYPE_CHECKING:
    from bugbout.testing.fixtures import FixedBugRepository


class RepositorySuite(PluginSuite):
    """A suite whose plugin reads a repository: the fixed-bug repository, per test."""

    @pytest.fixture
    def fixed_bug_repository(self, tmp_path: Path) -> FixedBugRepository:
        """The fixed-bug repository (see :class:`bugbout.testing.fixtures.FixedBugRepository`)."""
        from bugbout.testing.fixtures import build_fixed_bug_repository

        return build_fixed_bug_repository(tmp_path / "fixed-bug")


def git(path: Path, *args: str) -> str:
    """Run git in ``path``; its output, stripped."""
    return subprocess.run(
        ["git", "-C", str(path), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


class MinerSuite(RepositorySuite):
    """Contract tests for a miner (``bugbout_miners``).

    ``mine(request)`` on the fixed-bug repository returns a
    :class:`~bugbout.core.store.records.TaskSet` that accounts for every commit it examined
    (``examined`` is its tasks plus its exclusions), whose tasks are commits of the
    repository with their parents; it finds the repository's fix (unless
    :attr:`finds_fix` is ``False``) and leaves the repository as it was.
    """

    kind: ClassVar[str] = "miner"
    finds_fix: ClassVar[bool] = True
    """Whether the miner must find the fixed-bug repository's fix (a fix commit that names
    issue #12 and adds a test)."""

    @pytest.fixture
    def mined(
        self, plugins: Any, plugin_under_test: Any, fixed_bug_repository: FixedBugRepository
    ) -> TaskSet:
        tasks = self.mine(plugins, plugin_under_test, fixed_bug_repository)
        assert isinstance(tasks, TaskSet), f"mine() returned {type(tasks).__name__}"
        return tasks

    @staticmethod
    def mine(plugins: Any, miner: Any, repository: FixedBugRepository) -> TaskSet:
        """What ``miner`` finds in ``repository``. A miner that runs the project's tests
        (``mine_tested``) runs them with this interpreter, off the network."""
        from bugbout.core.mine.injection import SuiteRunner, TestingMiner
        from bugbout.core.plumbing.runtime.progress import SilentProgress
        from bugbout.sandbox.network import offline

        request = repository.mining_request()
        if not isinstance(miner, TestingMiner):
            return miner.mine(request)  # type: ignore[no-any-return]
        runner = SuiteRunner(
            builder=plugins.create("environment", "interpreter"),
            project=request.project,
            home=repository.path.parent / "bugbout-home",
            confine=lambda argv, tree, writable: offline(argv),
            timeout=600,
        )
        return miner.mine_tested(request, runner, SilentProgress())

    def test_accounts_for_every_examined_commit(self, mined: TaskSet) -> None:
        assert mined.examined == len(mined.tasks) + sum(mined.excluded.values())
        assert all(count > 0 for count in mined.excluded.values())

    def test_tasks_are_commits_with_their_parents(
        self, mined: TaskSet, fixed_bug_repository: FixedBugRepository
    ) -> None:
        path = fixed_bug_repository.path
        ids = [task.id for task in mined.tasks]
        assert len(ids) == len(set(ids)), "two tasks share an id"
        for task in mined.tasks:
            assert git(path, "rev-parse", "--verify", f"{task.sha}^{{commit}}") == task.sha
            assert git(path, "rev-parse", f"{task.sha}^") == task.parent

    def test_finds_the_fix(self, mined: TaskSet, fixed_bug_repository: FixedBugRepository) -> None:
        if not self.finds_fix:
            pytest.skip("finds_fix = False")
        found = [task for task in mined.tasks if task.sha == fixed_bug_repository.fix]
        assert found, f"the fix {fixed_bug_repository.fix[:12]} is not a task"
        (task,) = found
        assert task.parent == fixed_bug_repository.parent
        assert task.issue.number == fixed_bug_repository.issue
        assert fixed_bug_repository.test_file in task.test_files

    def test_leaves_the_repository_alone(
        self, plugins: Any, plugin_under_test: Any, fixed_bug_repository: FixedBugRepository
    ) -> None:
        path = fixed_bug_repository.path
        head, branch = git(path, "rev-parse", "HEAD"), git(path, "branch", "--show-current")
        self.mine(plugins, plugin_under_test, fixed_bug_repository)
        assert git(path, "rev-parse", "HEAD") == head
        assert git(path, "branch", "--show-current") == branch
        assert git(path, "status", "--porcelain") == ""

    def test_is_deterministic(
        self, plugins: Any, mined: TaskSet, fixed_bug_repository: FixedBugRepository
    ) -> None:
        fresh = plugins.create(self.kind, self.plugin, dict(self.options))
        assert self.mine(plugins, fresh, fixed_bug_repository) == mined
