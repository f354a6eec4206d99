"""A command imports only the plugin modules of the kinds it uses, and composing leaves
Hydra's process-wide state as it found it."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hydra.core.config_store import ConfigStore
from hydra.core.global_hydra import GlobalHydra

from bugbout import hookimpl
from bugbout.cli.console import Console
from bugbout.config import HydraJob, compose_settings, run_with_hydra
from bugbout.core.contract.manager import BUILTIN_PLUGINS, Plugins, make_plugins
from bugbout.core.contract.settings import BoutSettings
from bugbout.core.contract.types import KINDS, EnvironmentPlugin, JudgePlugin

PROBE = """
import json, sys
from importlib.metadata import entry_points
from bugbout.cli import main
code = main(["-q", *sys.argv[1:]])
# the built-in kinds' modules; those installed as entry points load as any third party's
shipped = {point.value.split(":")[0] for point in entry_points(group="bugbout")}
loaded = sorted(name for name in sys.modules if name.count(".") == 3
                and name.startswith("bugbout.plugins.") and name not in shipped)
print(json.dumps({"code": code, "plugins": loaded}))
"""


def _repository(root: Path) -> Path:
    """A one-commit repository with a ``bugbout.yaml`` that asks no issue tracker."""
    (root / "src" / "calc").mkdir(parents=True)
    (root / "src" / "calc" / "__init__.py").write_text("ONE = 1\n")
    (root / "bugbout.yaml").write_text(
        "defaults: [base, _self_]\nproject: {source: src/calc}\nissue-sources: {github: null}\n"
    )
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "start"], check=True)
    return root


def _probe(root: Path, *args: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], cwd=root, capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_mine_only_imports_the_miners_issue_sources_and_test_runners_only(
    tmp_path: Path,
) -> None:
    """The test runner says what a test file is; no environment, agent or sandbox."""
    found = _probe(_repository(tmp_path), "tasks", "--mine-only")
    assert found["code"] == 0
    loaded = found["plugins"]
    assert isinstance(loaded, list)
    assert "bugbout.plugins.miners.git_history" in loaded
    assert {name.split(".")[2] for name in loaded} == {"miners", "issue_sources", "test_runners"}


def test_a_deferred_kind_is_there_when_asked_for() -> None:
    every = make_plugins(entry_points=False)
    mining = make_plugins(entry_points=False, kinds=["miner"])
    assert set(mining.deferred) == set(KINDS) - {"miner"}
    assert sorted(mining.of_kind("reporter")) == sorted(every.of_kind("reporter"))
    assert "reporter" not in mining.deferred
    assert [(p.kind, p.name, p.source) for p in mining.all()] == [
        (p.kind, p.name, p.source) for p in every.all()
    ]
    assert not mining.deferred


def test_every_builtin_module_implements_the_hooks_of_its_folder_only() -> None:
    """What deferring by folder relies on: a built-in module answers its kind's hook (an
    agent's its transcripts too), so importing it when its kind is asked for misses
    nothing."""
    from bugbout.core.contract.manager import builtin_kind

    for name in BUILTIN_PLUGINS:
        module = importlib.import_module(name)
        hooks = {attribute for attribute in dir(module) if attribute.startswith("bugbout_")}
        kind = builtin_kind(name)
        assert hooks <= {KINDS[kind].hook, "bugbout_transcript"}, name
        assert "bugbout_transcript" not in hooks or kind == "agent", name


def test_composing_leaves_hydra_state_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "bugbout.yaml").write_text(
        "defaults: [base, _self_]\nproject: {source: src/calc}\n"
        "contestants: {mine: {agent: command, command: [true]}}\n"
    )
    settings, _ = compose_settings(tmp_path, ["contestant=mine"])
    assert "mine" in settings.contestant
    assert "mine.yaml" not in ConfigStore.instance().repo.get("contestant", {})
    assert not GlobalHydra.instance().is_initialized()


class _Never:
    """An inline judge plugin, shipped with no YAML: selectable only once registered as
    its group's option."""

    @hookimpl
    def bugbout_judges(self) -> list[JudgePlugin]:
        return [JudgePlugin(name="never", factory=object, description="always abstains")]


class _Bare:
    """An inline environment plugin, shipped with no YAML."""

    @hookimpl
    def bugbout_environments(self) -> list[EnvironmentPlugin]:
        return [EnvironmentPlugin(name="bare", factory=object, description="nothing")]


def _with_never() -> Plugins:
    plugins = make_plugins(entry_points=False, kinds=["miner"])
    plugins.register(_Never(), name="never")
    return plugins


def test_a_plugin_is_an_option_where_it_is_chosen(tmp_path: Path) -> None:
    (tmp_path / "bugbout.yaml").write_text(
        "defaults: [base, {override judge: never}, _self_]\nproject: {source: src}\n"
    )
    settings, _ = compose_settings(tmp_path, [], _with_never())
    assert settings.judge.name == "never"
    (tmp_path / "bugbout.yaml").write_text("defaults: [base, _self_]\nproject: {source: src}\n")
    settings, _ = compose_settings(tmp_path, ["judge=never"], _with_never())
    assert settings.judge.name == "never"
    assert "never.yaml" not in ConfigStore.instance().repo.get("judge", {})


def test_a_plugin_chosen_under_a_moved_group_name_is_an_option(tmp_path: Path) -> None:
    (tmp_path / "bugbout.yaml").write_text(
        "defaults: [base, {override env: bare}, _self_]\nproject: {source: src}\n"
    )
    plugins = make_plugins(entry_points=False, kinds=["miner"])
    plugins.register(_Bare(), name="bare")
    notes: list[str] = []
    settings, _ = compose_settings(tmp_path, [], plugins, warn=notes.append)
    assert settings.environment.name == "bare"
    assert len(notes) == 1


def test_a_sweep_sees_every_plugin_as_an_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bugbout.yaml").write_text("defaults: [base, _self_]\nproject: {source: src}\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("bugbout.core.contract.manager.make_plugins", lambda **_: _with_never())
    judged: list[str] = []

    def job(settings: BoutSettings, plugins: Plugins, hydra_job: HydraJob) -> None:
        judged.append(settings.judge.name)

    assert run_with_hydra("run", ["-m", "judge=never,majority"], Console(quiet=True), job) == 0
    assert sorted(judged) == ["majority", "never"]


def test_run_imports_every_kind_up_front(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "bugbout.yaml").write_text("defaults: [base, _self_]\nproject: {source: src}\n")
    monkeypatch.chdir(tmp_path)
    deferred: list[object] = []

    def job(settings: BoutSettings, plugins: Plugins, hydra_job: HydraJob) -> None:
        deferred.append(dict(plugins.deferred))

    assert run_with_hydra("run", [], Console(quiet=True), job) == 0
    assert deferred == [{}]


def test_bugbouts_own_entry_point_plugins_wait_for_their_kind() -> None:
    """The JavaScript runners and the npm environment are entry points of bugbout's own
    plugin folders: a command that asks neither kind does not import them; asking the
    kind registers them under their entry-point names."""
    code = (
        "import sys, json\n"
        "from bugbout.core.contract.manager import make_plugins\n"
        "plugins = make_plugins(kinds=['judge', 'reporter'])\n"
        "before = sorted(m for m in sys.modules if m.startswith('bugbout.plugins.test_runners'))\n"
        "runners = sorted(plugins.of_kind('test-runner'))\n"
        "print(json.dumps([before, runners, plugins.distributions.get('vitest', '')]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, runners, distribution = json.loads(done.stdout.strip().splitlines()[-1])
    assert before == []
    assert {"pytest", "vitest", "jest", "mocha", "node-test"} <= set(runners)
    assert distribution.startswith("bugbout ")


def test_a_deferred_entry_point_that_cannot_import_is_a_problem_not_a_crash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from importlib import metadata

    broken = metadata.EntryPoint(
        name="broken", value="bugbout.plugins.test_runners.no_such_runner", group="bugbout"
    )
    monkeypatch.setattr(metadata, "entry_points", lambda group: [broken])
    plugins = make_plugins(kinds=["judge"])
    assert "pytest" in plugins.of_kind("test-runner")
    assert any(
        "plugin 'broken'" in problem and "failed to import" in problem
        for problem in plugins.problems
    ), plugins.problems
