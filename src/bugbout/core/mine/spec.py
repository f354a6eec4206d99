"""What mining takes: its spec (the sections of the bout's settings it reads) and the
plugin implementations it uses, made by :mod:`bugbout.core.pipeline`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_core import to_json

from bugbout import __version__
from bugbout.core.contract.instances import Instance, instances
from bugbout.core.contract.settings import PluginChoice, ProjectSettings
from bugbout.core.contract.types import IssueSourcePlugin
from bugbout.core.store.records import digest

if TYPE_CHECKING:
    from bugbout.core.mine.injection import SuiteRunner
    from bugbout.core.mine.issues import IssueSource
    from bugbout.core.mine.mining import Miner, MiningRequest
    from bugbout.core.plumbing.testruns.test_runner import TestRunner

MINING_FORMAT = "3"
"""Changes when what mining stores, or a rule of the built-in miner, changes: a result of
another format is not reused (3: forward merges give way to the commits they bring)."""


@dataclass(frozen=True)
class MineSpec:
    """What mining reads of the bout's settings: the repository and ``project:``, the
    miner chosen, ``issue-sources:`` and the test runner chosen."""

    repository: Path
    project: ProjectSettings
    miner: PluginChoice
    issue_sources: dict[str, dict[str, Any] | None]
    test_runner: PluginChoice

    def sources(self) -> list[Instance]:
        """The entries of ``issue-sources``, in the order they are asked."""
        return instances("issue-sources", IssueSourcePlugin.kind, self.issue_sources)

    def key(self, request: MiningRequest, head: str, made_by: tuple[str, ...]) -> str:
        """What determines a mining result: the head of the history walked, the request,
        the miner's and the issue sources' settings, what of their plugins decides
        (``made_by``: the miner's options as it reads them, its distribution, the
        sources'), and bugbout's version."""
        chosen = to_json({"miner": self.miner, "issue_sources": self.issue_sources})
        return digest(
            head,
            request.model_dump_json(),
            chosen.decode(),
            *made_by,
            f"bugbout={__version__}",
            f"format={MINING_FORMAT}",
        )


@dataclass(frozen=True)
class MinePlugins:
    """The plugin implementations mining uses: the miner; made when first needed, the
    issue sources (by entry name), the test runner and, for a miner that runs the suite,
    its :class:`~bugbout.core.mine.injection.SuiteRunner`; what of the plugins decides a
    mining (``made_by``, for :meth:`MineSpec.key`), the lifecycle hooks (``notify``) and
    the problems the plugins met (``problems``, warned of once)."""

    miner: Miner
    sources: Callable[[], list[tuple[str, IssueSource]]]
    runner: Callable[[], TestRunner]
    suite: Callable[[], SuiteRunner]
    made_by: tuple[str, ...]
    notify: Callable[..., None]
    problems: list[str]
