"""The ``__NAME__`` miner: fixes from the git history, limited to some directories.

A miner walks a repository's history and returns the fixes agents will replay, newest
first, with how much it examined and why it left the rest out. This one delegates to
bugbout's ``git-history`` miner, found by name among the installed plugins, and keeps
only the fixes whose source changes lie under ``paths``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bugbout.miners import (
    MinerPlugin,
    MiningRequest,
    Options,
    TaskSet,
    TestRunner,
    TitleLookup,
    create_plugin,
    hookimpl,
)
from pydantic import Field

OUTSIDE_PATHS = "outside-paths"
"""Why a fix was left out: it changes source files outside ``paths``."""


class __TITLE__Options(Options):
    """Options of the ``__NAME__`` miner: ``paths``, and ``history``, the options of
    bugbout's ``git-history`` miner it delegates to."""

    paths: tuple[str, ...] = ()
    """Directories of the repository; a fix counts when every source file it changes lies
    under one of them (every fix counts when empty)."""
    history: dict[str, Any] = Field(default_factory=dict)
    """``git-history``'s options (``limit``, ``since``, ...)."""


class __TITLE__Miner:
    """``git-history``'s fixes, those outside ``paths`` left out."""

    def __init__(self, options: __TITLE__Options | None = None) -> None:
        self.options = options or __TITLE__Options()
        self.history = create_plugin(MinerPlugin, "git-history", self.options.history)

    def mine(
        self,
        request: MiningRequest,
        titles: TitleLookup | None = None,
        runner: TestRunner | None = None,
    ) -> TaskSet:
        found = self.history.mine(request, titles, runner)
        kept = [task for task in found.tasks if all(map(self.inside, task.source_files))]
        if len(kept) < len(found.tasks):
            found.exclude(OUTSIDE_PATHS, len(found.tasks) - len(kept))
        return found.model_copy(update={"tasks": kept})

    def inside(self, path: str) -> bool:
        if not self.options.paths:
            return True
        return any(path.startswith(d.rstrip("/") + "/") for d in self.options.paths)


@hookimpl
def bugbout_miners() -> Iterator[MinerPlugin]:
    yield MinerPlugin(
        name="__NAME__",
        factory=__TITLE__Miner,
        options=__TITLE__Options,
        description="git-history, limited to fixes under some directories",
    )
