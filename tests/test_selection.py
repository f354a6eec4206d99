"""Choosing plugins, one way for every kind: a setting given in ``bugbout.yaml`` and one
given on the command line both reach the plugin the core builds; old spellings still work."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel, ConfigDict

from bugbout import hookimpl
from bugbout.config import compose_settings
from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.manager import Plugins, make_plugins
from bugbout.core.contract.settings import BoutSettings, VerdictsSettings
from bugbout.core.contract.types import KINDS, PluginSpec
from bugbout.core.plumbing.executor import make_executor
from bugbout.core.plumbing.progress import SilentProgress
from bugbout.core.race.contestants import build_contestants
from bugbout.core.report.report import Report
from bugbout.core.report.report_store import write_reports
from bugbout.core.store.store import Store
from bugbout.core.tasks import issue_resolver


class ProbeOptions(BaseModel):
    """Two options to set, one in ``bugbout.yaml`` and one on the command line."""

    model_config = ConfigDict(extra="forbid")

    a: str = "default"
    b: str = "default"
    name: str = ""  # an agent is given its contestant's name


class Probe:
    """Any kind's implementation: it keeps the options it was built with."""

    filename = None  # a reporter that prints

    def __init__(self, options: ProbeOptions) -> None:
        self.options = options

    def problem(self) -> None:  # an executor that can run here
        return None

    def close(self) -> None:
        return None

    def render(self, report: Report) -> str:
        return self.options.model_dump_json()


def _records(kind: str) -> list[PluginSpec]:
    return [KINDS[kind](name="probe", factory=Probe, options=ProbeOptions)]


class ProbePlugins:
    """A third-party distribution with a plugin named ``probe`` of every kind."""

    @hookimpl
    def bugbout_miners(self) -> list[PluginSpec]:
        return _records("miner")

    @hookimpl
    def bugbout_issue_sources(self) -> list[PluginSpec]:
        return _records("issue-source")

    @hookimpl
    def bugbout_environments(self) -> list[PluginSpec]:
        return _records("environment")

    @hookimpl
    def bugbout_agents(self) -> list[PluginSpec]:
        return _records("agent")

    @hookimpl
    def bugbout_sandboxes(self) -> list[PluginSpec]:
        return _records("sandbox")

    @hookimpl
    def bugbout_executors(self) -> list[PluginSpec]:
        return _records("executor")

    @hookimpl
    def bugbout_assignments(self) -> list[PluginSpec]:
        return _records("assignment")

    @hookimpl
    def bugbout_judges(self) -> list[PluginSpec]:
        return _records("judge")

    @hookimpl
    def bugbout_auditors(self) -> list[PluginSpec]:
        return _records("auditor")

    @hookimpl
    def bugbout_reporters(self) -> list[PluginSpec]:
        return _records("reporter")


@pytest.fixture
def probes() -> Plugins:
    plugins = make_plugins(entry_points=False)
    plugins.register(ProbePlugins(), name="probes", distribution="bugbout-probes")
    return plugins


def project(root: Path, config: dict[str, Any]) -> Path:
    """A ``bugbout.yaml`` with bugbout's defaults and ``config``."""
    base = {"defaults": ["base", "_self_"], "project": {"source": "src/calc"}}
    (root / "bugbout.yaml").write_text(yaml.safe_dump({**base, **config}, sort_keys=False))
    return root


GROUPS = ["miner", "environment", "sandbox", "executor", "judge", "auditor"]
"""The kinds of which a bout uses one plugin: a config group and settings key of the
kind's own word."""


def built(kind: str, settings: BoutSettings, plugins: Plugins) -> Any:
    """The plugin of ``kind`` that the core builds from ``settings``."""
    if kind == "executor":
        return make_executor(settings, plugins)
    choice = getattr(settings, kind)
    return plugins.create(kind, choice.name, choice.options)


@pytest.mark.parametrize("kind", GROUPS)
def test_a_group_kind_gets_its_options_from_the_file_and_the_command_line(
    kind: str, probes: Plugins, tmp_path: Path
) -> None:
    config = {"defaults": ["base", {f"override {kind}": "probe"}, "_self_"]}
    root = project(tmp_path, {**config, kind: {"a": "file", "b": "file"}})
    settings, _ = compose_settings(root, [f"{kind}.b=command-line"], probes)
    plugin = built(kind, settings, probes)
    assert isinstance(plugin, Probe)
    assert (plugin.options.a, plugin.options.b) == ("file", "command-line")


@pytest.mark.parametrize("kind", GROUPS)
def test_a_group_kind_is_chosen_on_the_command_line_too(
    kind: str, probes: Plugins, tmp_path: Path
) -> None:
    root = project(tmp_path, {})
    settings, _ = compose_settings(root, [f"{kind}=probe", f"{kind}.a=command-line"], probes)
    assert built(kind, settings, probes).options.a == "command-line"
    with pytest.raises(ConfigError, match=rf"^{kind}.c: no such setting \(valid keys under "):
        compose_settings(root, [f"{kind}=probe", f"{kind}.c=1"], probes)


def test_a_packaged_option_gets_its_settings_from_the_file_and_the_command_line(
    tmp_path: Path,
) -> None:
    """The walk of ``judge=strict``: its packaged YAML, ``bugbout.yaml``, the command line."""
    config = {"defaults": ["base", {"override judge": "strict"}, "_self_"]}
    root = project(tmp_path, {**config, "judge": {"quorum": 0.6}})
    settings, plugins = compose_settings(root, ["judge.keep-assignments=[reproduce]"])
    judge = built("judge", settings, plugins)
    assert (judge.name, judge.options.quorum) == ("strict", 0.6)
    assert judge.options.keep_assignments == ["reproduce"]


@pytest.mark.parametrize("role", ["contestant", "examiner"])
def test_a_defined_agent_gets_its_options_from_the_file_and_the_command_line(
    role: str, probes: Plugins, tmp_path: Path
) -> None:
    """``contestants:`` (``examiners:``) maps names to an agent and its options; the core
    races every one when none is chosen, and ``contestant.NAME.OPTION`` sets an option."""
    entry = {"agent": "probe", "a": "file", "b": "file"}
    if role == "examiner":
        entry["assignment"] = "probe"
    root = project(tmp_path, {f"{role}s": {"mine": entry, "other": {"agent": "probe"}}})
    settings, _ = compose_settings(root, [f"{role}.mine.b=command-line"], probes)
    racers = {racer.name: racer for racer in build_contestants(settings, probes)}
    assert set(racers) == {"mine", "other"}
    mine = racers["mine"]
    assert (mine.role, mine.agent.options.a, mine.agent.options.b) == (role, "file", "command-line")
    assert mine.agent.options.name == "mine"
    assert isinstance(mine.assignment, Probe) == (role == "examiner")
    chosen, _ = compose_settings(root, [f"{role}=mine", f"{role}.mine.a=chosen"], probes)
    assert [(racer.name, racer.agent.options.a) for racer in build_contestants(chosen, probes)] == [
        ("mine", "chosen")
    ]


def test_an_agent_plugin_is_a_contestant_by_its_own_name(probes: Plugins, tmp_path: Path) -> None:
    root = project(tmp_path, {"contestants": {"mine": {"agent": "probe"}}})
    settings, _ = compose_settings(root, ["contestant=probe", "contestant.probe.a=cli"], probes)
    racers = build_contestants(settings, probes)
    assert [(racer.name, racer.agent.options.a) for racer in racers] == [("probe", "cli")]


def test_a_reporter_gets_its_options_from_the_file_and_the_command_line(
    probes: Plugins, tmp_path: Path
) -> None:
    config = {"reporters": ["probe"], "reporter": {"probe": {"a": "file", "b": "file"}}}
    root = project(tmp_path, config)
    settings, _ = compose_settings(root, ["reporter.probe.b=command-line"], probes)
    printed = write_reports(
        Report(), Store(tmp_path / "out"), probes, settings.reporters, settings.reporter
    )
    assert json.loads(printed["probe"])["b"] == "command-line"
    assert json.loads(printed["probe"])["a"] == "file"


def test_an_issue_source_gets_its_options_from_the_file_and_the_command_line(
    probes: Plugins, tmp_path: Path
) -> None:
    config = {"tasks": {"issue-sources": ["probe"]}, "issue-source": {"probe": {"a": "file"}}}
    root = project(tmp_path, config)
    settings, _ = compose_settings(root, ["issue-source.probe.b=command-line"], probes)
    [(name, source)] = issue_resolver(settings, probes, SilentProgress()).sources
    assert (name, source.options.a, source.options.b) == ("probe", "file", "command-line")


def test_every_kind_is_covered() -> None:
    """Each kind has its test above; the kinds of one plugin per bout are settings keys."""
    multiple = {"agent", "assignment", "reporter", "issue-source"}
    assert set(KINDS) == set(GROUPS) | multiple
    assert set(GROUPS) <= set(BoutSettings.model_fields)


# -- the old spellings ------------------------------------------------------------------------


def test_env_on_the_command_line_is_environment_with_a_note(tmp_path: Path) -> None:
    notes: list[str] = []
    root = project(tmp_path, {})
    settings, _ = compose_settings(
        root, ["env=interpreter", "env.path=/usr/bin/python3"], warn=notes.append
    )
    assert (settings.environment.name, settings.environment.options) == (
        "interpreter", {"path": "/usr/bin/python3"}
    )  # fmt: skip
    assert notes == [
        "env=interpreter: `env` is now `environment`; write environment=interpreter "
        "(env still works)",
        "env.path=/usr/bin/python3: `env` is now `environment`; write "
        "environment.path=/usr/bin/python3 (env still works)",
    ]


def test_env_in_bugbout_yaml_is_environment_with_a_note(tmp_path: Path) -> None:
    notes: list[str] = []
    config = {
        "defaults": ["base", {"override env": "interpreter"}, "_self_"],
        "env": {"path": "/usr/bin/python3"},
        "judge": {"run-suite": False},
    }
    root = project(tmp_path, config)
    settings, _ = compose_settings(root, [], warn=notes.append)
    assert (settings.environment.name, settings.environment.options) == (
        "interpreter", {"path": "/usr/bin/python3"}
    )  # fmt: skip
    assert settings.verdicts.run_suite is False
    assert "run-suite" not in settings.judge.options
    where = root / "bugbout.yaml"
    assert notes == [
        f"{where}: `override env: interpreter` is now `override environment: interpreter`; "
        "rename it (env still works)",
        f"{where}: `env:` is now `environment:`; rename it (env still works)",
        f"{where}: `judge.run-suite:` is now `verdicts.run-suite:`; rename it "
        "(judge.run-suite still works)",
    ]


def test_the_python_api_warns_of_an_old_spelling(tmp_path: Path) -> None:
    root = project(tmp_path, {})
    with pytest.warns(FutureWarning, match="`judge.run-suite` is now `verdicts.run-suite`"):
        settings, _ = compose_settings(root, ["judge.run-suite=false"])
    assert settings.verdicts.run_suite is False


def test_an_assignment_chosen_as_an_examiner_is_a_one_line_error(tmp_path: Path) -> None:
    root = project(tmp_path, {})
    with pytest.raises(ConfigError, match=r"^examiner=reproduce: reproduce is an assignment"):
        compose_settings(root, ["examiner=reproduce"])


def test_moving_run_suite_keeps_the_stores_evidence_keys() -> None:
    """The matrix's key holds ``run-suite`` on its own, as when it was the judge's; the
    other evidence keys hold the rest of ``verdicts:`` only, as before it moved there."""
    assert VerdictsSettings(run_suite=False).key() == VerdictsSettings().key()
    assert VerdictsSettings(timeout=5).key() != VerdictsSettings().key()
