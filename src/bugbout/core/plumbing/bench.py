"""The test bench: what every test run of a task after the race shares (its trees, its
environment, the test runner, the project's test settings, where its suite is, the
timeout, the confinement), said once.

The base run, the cross-examination, the scores and the audits' gates each take a
:class:`Bench` and make their own working copies on it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.confinement.confine import Confine
from bugbout.core.plumbing.environments.environment import Environment
from bugbout.core.plumbing.testruns.test_runner import TestRunner, TestRunRequest
from bugbout.core.plumbing.trees.checkout import Checkouts
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.plumbing.trees.testtree import TestTree
from bugbout.core.store.records import TestRun


@dataclass(frozen=True)
class Bench:
    """One task's test runs: where its trees come from and how its runner runs in them."""

    checkouts: Checkouts
    environment: Environment
    project: ProjectSettings
    timeout: float
    confine: Confine
    suite: tuple[str, ...]
    """The repository's tests at the task's commit
    (:meth:`~bugbout.core.plumbing.testruns.test_runner.TestRunner.suite_paths`): what "the
    suite" runs."""
    runner: TestRunner
    """What runs the tests (the bout's ``test-runner``)."""

    @property
    def git(self) -> Git:
        """The repository the trees come from."""
        return self.checkouts.git

    def run(
        self,
        tree: Path | TestTree,
        targets: list[str],
        *,
        label: str,
        skip: frozenset[str] = frozenset(),
    ) -> TestRun:
        """Run ``targets`` in ``tree`` with the task's runner (see
        :meth:`bugbout.core.plumbing.testruns.test_runner.TestRunner.run`)."""
        return self.runner.run(self.request(tree, targets, label=label, skip=skip))

    def request(
        self,
        tree: Path | TestTree,
        targets: list[str],
        *,
        label: str,
        skip: frozenset[str] = frozenset(),
    ) -> TestRunRequest:
        """The runner's request for ``targets`` in ``tree``."""
        return TestRunRequest(
            environment=self.environment,
            tree=tree,
            targets=tuple(targets),
            project=self.project,
            label=label,
            timeout=self.timeout,
            confine=self.confine,
            skip=skip,
        )
