"""The bout's test environments: each task's is the oracle's (with the imports it added),
built on first use and shared by the race, its rounds and the stages after it."""

from __future__ import annotations

import threading
from pathlib import Path

from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import (
    Environment,
    EnvironmentBuilder,
    EnvironmentRequest,
)
from bugbout.core.plumbing.environments.repair import with_added
from bugbout.core.plumbing.trees.checkout import Checkouts
from bugbout.core.store.records import OracleSet, Task
from bugbout.core.store.store import ORACLES, Store


class Environments:
    """Each task's test environment, built once per bout by ``builder``; its oracle is
    read from ``store``, its caches go under ``home``."""

    def __init__(
        self, builder: EnvironmentBuilder, project: ProjectSettings, store: Store, home: Path
    ) -> None:
        self.builder = builder
        self.project = project
        self.store = store
        self.home = home
        self._built: dict[str, Environment] = {}
        self._lock = threading.Lock()

    def of(self, task: Task, checkouts: Checkouts) -> Environment:
        """``task``'s test environment, built on the first call (one build at a time)."""
        with self._lock:
            if task.id not in self._built:
                oracles = self.store.read(ORACLES, OracleSet) or OracleSet()
                oracle = oracles.root.get(task.id)
                request = EnvironmentRequest(
                    project=with_added(self.project, oracle.added if oracle else []),
                    tree=checkouts.base(task.sha),
                    date=task.date,
                    home=self.home,
                )
                self._built[task.id] = self.builder.build(request)
            return self._built[task.id]
