"""A mining result is reused while the history's head and the settings it was computed
from stay the same; anything else mines again."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bugbout import IssueSourcePlugin, hookimpl
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.types import Options
from bugbout.core.mine.issues import IssueRequest, IssueSourceUnavailable
from bugbout.core.pipeline import mine_tasks
from bugbout.core.plumbing.runtime.progress import SilentProgress
from bugbout.core.store.records import Issue, TaskSet
from bugbout.core.store.store import MINING, TASKS, Store
from bugbout.plugins.miners.git_history import GitHistoryMiner, GitHistoryOptions
from history import calc_settings


class Shown(SilentProgress):
    """Progress that keeps what each stage said it was doing."""

    def __init__(self) -> None:
        super().__init__()
        self.stages: list[str] = []

    def start(self, description: str, total: int | None = None) -> None:
        self.stages.append(description)


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each history walk of the ``git-history`` miner, by the repository it walked."""
    walked: list[str] = []
    real = GitHistoryMiner.mine

    def spy(self: GitHistoryMiner, request: Any, titles: Any = None, runner: Any = None) -> TaskSet:
        walked.append(str(request.repository))
        return real(self, request, titles, runner)

    monkeypatch.setattr(GitHistoryMiner, "mine", spy)
    return walked


@pytest.fixture
def history(calc_repo: tuple[Path, dict[str, str]], tmp_path: Path) -> Path:
    """A copy of the synthetic history this test may commit to."""
    target = tmp_path / "calc"
    shutil.copytree(calc_repo[0], target)
    return target


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def test_a_second_mining_reuses_the_first(
    history: Path, tmp_path: Path, plugins: Plugins, walks: list[str]
) -> None:
    store = Store(tmp_path / ".bugbout")
    first = mine_tasks(calc_settings(history), plugins, store)
    shown = Shown()
    again = mine_tasks(calc_settings(history), plugins, store, shown)
    assert walks == [str(history)]
    assert again == first
    assert store.read(TASKS, TaskSet) == first
    head = _git(history, "rev-parse", "HEAD")
    assert shown.stages == [f"reused mining of {head[:12]}"]


def test_a_new_commit_on_the_branch_mines_again(
    history: Path, tmp_path: Path, plugins: Plugins, walks: list[str]
) -> None:
    store = Store(tmp_path / ".bugbout")
    before = mine_tasks(calc_settings(history), plugins, store)
    (history / "README.md").write_text("calc, now documented\n")
    _git(history, "commit", "--quiet", "-am", "Document calc")
    after = mine_tasks(calc_settings(history), plugins, store)
    assert len(walks) == 2
    assert after.examined == before.examined + 1


def test_a_changed_miner_setting_mines_again(
    history: Path, tmp_path: Path, plugins: Plugins, walks: list[str]
) -> None:
    store = Store(tmp_path / ".bugbout")
    every = mine_tasks(calc_settings(history), plugins, store)
    one = mine_tasks(calc_settings(history, miner={"limit": 1}), plugins, store)
    assert len(walks) == 2
    assert len(every.tasks) > 1
    assert [task.id for task in one.tasks] == [every.tasks[0].id]
    mine_tasks(calc_settings(history, miner={"limit": 1}), plugins, store)
    assert len(walks) == 2


def test_a_corrupt_stored_mining_is_mined_again_with_a_warning(
    history: Path, tmp_path: Path, plugins: Plugins, walks: list[str]
) -> None:
    store = Store(tmp_path / ".bugbout")
    first = mine_tasks(calc_settings(history), plugins, store)
    store.path(MINING).write_text('{"key": "0123", "head": ')
    progress = SilentProgress()
    again = mine_tasks(calc_settings(history), plugins, store, progress)
    assert len(walks) == 2
    assert again == first
    [warning] = progress.warnings
    assert "mining.json is corrupt" in warning
    assert "\n" not in warning
    mine_tasks(calc_settings(history), plugins, store)
    assert len(walks) == 2  # the record was written again


class _Down:
    """An issue source that is down until it is given an ``answer``."""

    answer: str | None = None

    def fetch(self, request: IssueRequest) -> Issue | None:
        if self.answer is None:
            raise IssueSourceUnavailable("no network")
        return Issue(number=request.number, title=self.answer, body="")


class _DownPlugin:
    @hookimpl
    def bugbout_issue_sources(self) -> Iterator[IssueSourcePlugin]:
        yield IssueSourcePlugin(name="down", factory=lambda options: _Down(), options=Options)


def test_the_issues_are_read_again_when_a_source_was_down(
    history: Path,
    tmp_path: Path,
    plugins: Plugins,
    walks: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The walk is reused, but not what the next source said in the down one's place."""
    down = _DownPlugin()
    plugins.register(down, name="down", distribution="tests")
    sources = {"down": {"issue-source": "down"}, "commit": {"issue-source": "commit"}}
    settings = calc_settings(history).model_copy(update={"issue_sources": sources})
    store = Store(tmp_path / ".bugbout")
    progress = SilentProgress()
    found = mine_tasks(settings, plugins, store, progress)
    assert any("'down' unavailable" in warning for warning in progress.warnings)
    monkeypatch.setattr(_Down, "answer", "The sum is wrong")
    again = mine_tasks(settings, plugins, store)
    assert len(walks) == 1
    assert [task.id for task in again.tasks] == [task.id for task in found.tasks]
    named = [number for number, task in enumerate(again.tasks) if task.issue.number]
    assert {again.tasks[number].issue.title for number in named} == {"The sum is wrong"}
    assert {found.tasks[number].issue.title for number in named} != {"The sum is wrong"}
    monkeypatch.setattr(_Down, "answer", None)
    assert mine_tasks(settings, plugins, store) == again  # kept now: asked no more
    assert len(walks) == 1


def test_a_changed_default_of_the_miner_mines_again(
    history: Path,
    tmp_path: Path,
    plugins: Plugins,
    walks: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A new release of a miner whose default rule changed mines again, though the
    settings name no option (a stored mining was reused under the old rule)."""
    store = Store(tmp_path / ".bugbout")
    every = mine_tasks(calc_settings(history), plugins, store)
    monkeypatch.setattr(GitHistoryOptions.model_fields["limit"], "default", 1)
    GitHistoryOptions.model_rebuild(force=True)
    try:
        one = mine_tasks(calc_settings(history), plugins, store)
    finally:
        monkeypatch.undo()
        GitHistoryOptions.model_rebuild(force=True)
    assert len(walks) == 2
    assert [task.id for task in one.tasks] == [every.tasks[0].id]
