"""The bout's tools: what its attempts and test runs take from its plugins (the sandbox,
the test environments, the test runner, how tests are confined), made once in the
driver, or once per job in a remote worker, and where they keep their caches. The test
runs after the race take only their part, :class:`Benches`, made from a
:class:`BenchSpec`."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Literal

from bugbout.core.contract.manager import Plugins, make_plugins
from bugbout.core.contract.settings import (
    BoutSettings,
    LimitsSettings,
    PluginChoice,
    ProjectSettings,
    RunSettings,
    TestLimitsSettings,
)
from bugbout.core.contract.types import EnvironmentPlugin, SandboxPlugin, TestRunnerPlugin
from bugbout.core.plumbing.bench import Bench
from bugbout.core.plumbing.checkout import Checkouts
from bugbout.core.plumbing.confine import Confine, masked_paths, test_confinement
from bugbout.core.plumbing.environments import Environments
from bugbout.core.plumbing.git import Git
from bugbout.core.plumbing.home import bugbout_home
from bugbout.core.plumbing.limits import guard_program
from bugbout.core.plumbing.test_runner import TestRunner
from bugbout.core.store.records import Task
from bugbout.core.store.store import Store
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

    def settings(self) -> BoutSettings:
        """These sections as bout settings, the rest left at their defaults: what the
        tools are built from (:func:`test_confinement` reads whole settings)."""
        return BoutSettings(
            project=self.project,
            root=self.root,
            environment=self.environment,
            test_runner=self.test_runner,
            sandbox=self.sandbox,
            limits=LimitsSettings(tests=self.test_limits),
            run=RunSettings(checkouts=self.checkouts),
        )


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

    @cached_property
    def guard(self) -> Path | None:
        """The compiled guard the attempts run under (:func:`guard_program`), compiled at
        the first; ``None``: guard.py."""
        return guard_program(self.home)

    def checkouts(self, git: Git) -> Checkouts:
        """The bout's cached trees and working copies, made as ``run.checkouts`` says."""
        return Checkouts(git, self.home / "checkouts", self.checkout_method)

    def bench(self, task: Task, checkouts: Checkouts, timeout: float) -> Bench:
        """``task``'s test bench: its environment, its suite at its commit, ``timeout``."""
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
    """The bout's benches with its settings and plugins: what the pipeline makes a stage's
    plugins from."""

    settings: BoutSettings
    plugins: Plugins

    @classmethod
    def build(cls, settings: BoutSettings, plugins: Plugins, store: Store) -> Tools:
        """The tools ``settings`` select, made by ``plugins``."""
        home = bugbout_home()
        sandbox = plugins.create(SandboxPlugin, settings.sandbox.name, settings.sandbox.options)
        builder = plugins.create(
            EnvironmentPlugin, settings.environment.name, settings.environment.options
        )
        environments = Environments(builder, settings.project, store, home)
        runner = plugins.create(
            TestRunnerPlugin, settings.test_runner.name, settings.test_runner.options
        )
        confine = test_confinement(settings, sandbox, home)
        return cls(
            store=store,
            home=home,
            sandbox=sandbox,
            environments=environments,
            runner=runner,
            confine=confine,
            project=settings.project,
            repository=settings.repository,
            checkout_method=settings.run.checkouts,
            masked=masked_paths(settings, home),
            settings=settings,
            plugins=plugins,
        )

    @classmethod
    def in_worker(cls, settings: BoutSettings) -> Tools:
        """The tools rebuilt in a remote worker from the settings a job's spec ships (its
        own sections, :meth:`BenchSpec.settings`) and the plugins installed there: the
        worker must see the repository, the store and ``BUGBOUT_HOME`` at the same paths."""
        return cls.build(settings, make_plugins(), Store(settings.store_dir))
