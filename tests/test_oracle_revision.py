"""A stored oracle is keyed by how its environment was resolved: one that an older
revision of the builder made is kept only while the builder resolves the task's
environment to the same key; otherwise it is computed again."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from bugbout import hookimpl
from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import PluginChoice
from bugbout.core.contract.types import EnvironmentPlugin
from bugbout.core.pipeline import compute_oracles, mine_tasks
from bugbout.core.plumbing.environments.environment import EnvironmentRequest
from bugbout.core.store.records import OracleSet
from bugbout.core.store.store import Store
from bugbout.plugins.environments.interpreter import (
    InterpreterBuilder,
    InterpreterEnvironment,
    InterpreterOptions,
)
from history import calc_settings


@dataclass
class _Resolving:
    """How the builder under test resolves now: its revision and the key it resolves to."""

    revision: str
    key: str


class _Revised:
    """An environment plugin whose builder's revision and key a test sets."""

    def __init__(self, now: _Resolving) -> None:
        self.now = now

    @hookimpl
    def bugbout_environments(self) -> Iterator[EnvironmentPlugin]:
        now = self.now

        class Builder(InterpreterBuilder):
            revision = now.revision

            def build(self, request: EnvironmentRequest) -> InterpreterEnvironment:
                return replace(super().build(request), key=now.key)

        yield EnvironmentPlugin(name="revised", factory=Builder, options=InterpreterOptions)


def _compute(repo: Path, store: Store, now: _Resolving) -> OracleSet:
    plugins = make_plugins(entry_points=False)
    plugins.register(_Revised(now), name="revised")
    settings = calc_settings(repo, miner={"limit": 1}).model_copy(
        update={"environment": PluginChoice(name="revised")}
    )
    return compute_oracles(settings, plugins, store, mine_tasks(settings, plugins, store))


@pytest.mark.slow
def test_an_oracle_of_another_revision_is_kept_only_for_the_same_environment(
    calc_repo: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    repo, _ = calc_repo
    store = Store(tmp_path / ".bugbout")
    [first] = _compute(repo, store, _Resolving("1", "env-a")).root.values()
    assert (first.status, first.revision, first.environment_key) == ("ok", "1", "env-a"), (
        first.reason
    )

    [kept] = _compute(repo, store, _Resolving("2", "env-a")).root.values()
    assert kept.runs == first.runs  # not run again: the same environment
    assert (kept.revision, kept.environment_key) == ("2", "env-a")

    [again] = _compute(repo, store, _Resolving("3", "env-b")).root.values()
    assert again.runs != first.runs  # run again: the environment is another now
    assert (again.revision, again.environment_key) == ("3", "env-b")
    assert again.fail_to_pass == first.fail_to_pass
