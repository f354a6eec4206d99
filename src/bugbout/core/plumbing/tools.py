"""The bout's tools: what its attempts and test runs take from its plugins (the sandbox,
the test environments, the test runner, how tests are confined), made once in the
driver, or once per job in a remote worker, and where they keep their caches. The test
runs after the race take only their part, :class:`Benches`, made from a
:class:`BenchSpec`."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Self

from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import (
    BoutSettings,
    PluginChoice,
    ProjectSettings,
    TestLimitsSettings,
)
from bugbout.core.contract.types import EnvironmentPlugin, SandboxPlugin, TestRunnerPlugin
from bugbout.core.store.records import Task
from bugbout.core.store.store import Store

if TYPE_CHECKING:
    from bugbout.core.plumbing.bench import Bench
    from bugbout.core.plumbing.confinement.confine import Confine
    from bugbout.core.plumbing.environments.environments import Environments
    from bugbout.core.plumbing.testruns.test_runner import TestRunner
    from bugbout.core.plumbing.trees.checkout import Checkouts
    from bugbout.core.plumbing.trees.git import Git
    from bugbout.sandbox.confinement import Sandbox


@dataclass(frozen=True)
class BenchSpec:
    """What a task's test bench is made from: the project and where it lives (``root``),
    the environment builder, test runner and sandbox chosen, what a test run may
    consume (``limits.tests``) and how checkouts are made (``run.checkouts``)."""

    project: ProjectSettings
    root: Path
    environment: PluginChoice
    test_runner: PluginChoice
    sandbox: PluginChoice
    test_limits: TestLimitsSettings
    checkouts: Literal["auto", "overlay", "reflink", "copy"]

    @classmethod
    def of(cls, settings: BoutSettings) -> BenchSpec:
        """The sections of ``settings`` a test bench is made from."""
        return cls(
            project=settings.project,
            root=settings.root,
            environment=settings.environment,
            test_runner=settings.test_runner,
            sandbox=settings.sandbox,
            test_limits=settings.limits.tests,
            checkouts=settings.run.checkouts,
        )

    @property
    def repository(self) -> Path:
        """Where the project's git repository is."""
        return (self.root / self.project.repository).resolve()

    @property
    def store_dir(self) -> Path:
        """Where the bout's store is."""
        return self.root / ".bugbout"


@dataclass(frozen=True)
class Benches:
    """What the test runs take: the store (its oracles), bugbout's home, the sandbox,
    the test environments, the test runner, how tests are confined (in that sandbox), the
    project and how its checkouts are made, and what no agent or test sees
    (:func:`masked_paths`)."""

    store: Store
    home: Path
    sandbox: Sandbox
    environments: Environments
    runner: TestRunner
    confine: Confine
    project: ProjectSettings
    repository: Path
    checkout_method: Literal["auto", "overlay", "reflink", "copy"]
    masked: tuple[Path, ...]

    @classmethod
    def make(cls, spec: BenchSpec, plugins: Plugins, store: Store) -> Self:
        """The benches ``spec`` selects, made by ``plugins``."""
        from bugbout.core.plumbing.confinement.confine import masked_paths, test_confinement
        from bugbout.core.plumbing.environments.environments import Environments
        from bugbout.core.plumbing.runtime.home import bugbout_home

        home = bugbout_home()
        sandbox = plugins.create(SandboxPlugin, spec.sandbox.name, spec.sandbox.options)
        builder = plugins.create(EnvironmentPlugin, spec.environment.name, spec.environment.options)
        runner = plugins.create(TestRunnerPlugin, spec.test_runner.name, spec.test_runner.options)
        masked = masked_paths(spec.repository, spec.store_dir, home)
        return cls(
            store=store,
            home=home,
            sandbox=sandbox,
            environments=Environments(builder, spec.project, store, home),
            runner=runner,
            confine=test_confinement(spec.test_limits, sandbox, home, masked),
            project=spec.project,
            repository=spec.repository,
            checkout_method=spec.checkouts,
            masked=masked,
        )

    @cached_property
    def guard(self) -> Path | None:
        """The compiled guard the attempts run under (:func:`guard_program`), compiled at
        the first; ``None``: guard.py."""
        from bugbout.core.plumbing.confinement.limits import guard_program

        return guard_program(self.home)

    def checkouts(self, git: Git) -> Checkouts:
        """The bout's cached trees and working copies, made as ``run.checkouts`` says."""
        from bugbout.core.plumbing.trees.checkout import Checkouts

        return Checkouts(git, self.home / "checkouts", self.checkout_method)

    def bench(self, task: Task, checkouts: Checkouts, timeout: float) -> Bench:
        """``task``'s test bench: its environment, its suite at its commit, ``timeout``."""
        from bugbout.core.plumbing.bench import Bench

        return Bench(
            checkouts=checkouts,
            environment=self.environments.of(task, checkouts),
            runner=self.runner,
            project=self.project,
            timeout=timeout,
            confine=self.confine,
            suite=self.suite(task, checkouts),
        )

    def suite(self, task: Task, checkouts: Checkouts) -> tuple[str, ...]:
        """Where ``task``'s suite is at its commit, as its runner finds it."""
        tests = self.project.tests
        return self.runner.suite_paths(checkouts.base(task.parent), tests, task.test_files)


@dataclass(frozen=True)
class Tools(Benches):
    """The bout's benches, made from its whole settings; a job in another process makes
    only the benches, from their spec (:meth:`Benches.make`)."""

    @classmethod
    def build(cls, settings: BoutSettings, plugins: Plugins, store: Store) -> Tools:
        """The tools ``settings`` select, made by ``plugins``."""
        return cls.make(BenchSpec.of(settings), plugins, store)
