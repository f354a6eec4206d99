"""The bout's tools: what its attempts and test runs take from its plugins (the sandbox,
the test environments, the test runner, how tests are confined), made once in the
driver, or once per job in a remote worker (:meth:`Tools.in_worker`), and where they
keep their caches."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from bugbout.core.contract.manager import Plugins, make_plugins
from bugbout.core.contract.settings import BoutSettings
from bugbout.core.contract.types import EnvironmentPlugin, SandboxPlugin, TestRunnerPlugin
from bugbout.core.plumbing.bench import Bench
from bugbout.core.plumbing.checkout import Checkouts
from bugbout.core.plumbing.confine import Confine, test_confinement
from bugbout.core.plumbing.environments import Environments
from bugbout.core.plumbing.git import Git
from bugbout.core.plumbing.home import bugbout_home
from bugbout.core.plumbing.limits import guard_program
from bugbout.core.plumbing.test_runner import TestRunner
from bugbout.core.store.records import Task
from bugbout.core.store.store import Store
from bugbout.sandbox.confinement import Sandbox


@dataclass(frozen=True)
class Tools:
    """The bout's settings, plugins and store, its sandbox, its test environments, its
    test runner and how its tests are confined."""

    settings: BoutSettings
    plugins: Plugins
    store: Store
    home: Path
    sandbox: Sandbox
    environments: Environments
    runner: TestRunner
    confine: Confine

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
        return cls(settings, plugins, store, home, sandbox, environments, runner, confine)

    @classmethod
    def in_worker(cls, settings: BoutSettings) -> Tools:
        """The tools rebuilt in a remote worker from the bout's settings and the plugins
        installed there: the worker must see the repository, the store and
        ``BUGBOUT_HOME`` at the same paths."""
        return cls.build(settings, make_plugins(), Store(settings.store_dir))

    @cached_property
    def guard(self) -> Path | None:
        """The compiled guard the attempts run under (:func:`guard_program`), compiled at
        the first; ``None``: guard.py."""
        return guard_program(self.home)

    def checkouts(self, git: Git) -> Checkouts:
        """The bout's cached trees and working copies, made as ``run.checkouts`` says."""
        return Checkouts(git, self.home / "checkouts", self.settings.run.checkouts)

    def bench(self, task: Task, checkouts: Checkouts, timeout: float) -> Bench:
        """``task``'s test bench: its environment, its suite at its commit, ``timeout``."""
        project = self.settings.project
        return Bench(
            checkouts=checkouts,
            environment=self.environments.of(task, checkouts),
            runner=self.runner,
            project=project,
            timeout=timeout,
            confine=self.confine,
            suite=self.suite(task, checkouts),
        )

    def suite(self, task: Task, checkouts: Checkouts) -> tuple[str, ...]:
        """Where ``task``'s suite is at its commit, as its runner finds it."""
        tests = self.settings.project.tests
        return self.runner.suite_paths(checkouts.base(task.parent), tests, task.test_files)
