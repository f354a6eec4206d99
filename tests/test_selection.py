"""Choosing plugins, one way for every kind: a setting given in ``bugbout.yaml`` and one
given on the command line both reach the plugin the core builds."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bugbout.config import compose_settings
from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings
from bugbout.core.contract.types import KINDS
from bugbout.core.pipeline import (
    build_contestants,
    issue_resolver,
    mine_tasks,
    report_plugins,
    verdicts,
)
from bugbout.core.plumbing.runtime.executor import make_executor
from bugbout.core.plumbing.runtime.progress import SilentProgress
from bugbout.core.plumbing.tools import Tools
from bugbout.core.report.report import Report
from bugbout.core.report.reporters import write_reports
from bugbout.core.store.store import Store
from probe_plugins import Probe, ProbeOptions, project

GROUPS = ["miner", "environment", "test-runner", "sandbox", "executor", "judge", "auditor"]
"""The kinds of which a bout uses one plugin: a config group and settings key of the
kind's own word."""


def built(kind: str, settings: BoutSettings, plugins: Plugins) -> Any:
    """The plugin of ``kind`` that the core builds from ``settings``, where the core
    builds it (a miner, from what it found)."""
    store = Store(settings.repository / "out")
    if kind == "miner":
        subprocess.run(["git", "init", "-q", str(settings.repository)], check=True)
        (options,) = mine_tasks(settings, plugins, store).excluded
        return Probe(ProbeOptions.model_validate_json(options))
    if kind == "executor":
        return make_executor(settings, plugins)
    tools = Tools.build(settings, plugins, store)
    if kind == "sandbox":
        return tools.sandbox
    if kind == "environment":
        return tools.environments.builder
    if kind == "test-runner":
        return tools.runner
    built = verdicts(settings, plugins, tools)
    return built.judge if kind == "judge" else built.auditor


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
    config = {"reporters": {"probe": {"reporter": "probe", "a": "file", "b": "file"}}}
    root = project(tmp_path, config)
    settings, _ = compose_settings(root, ["reporters.probe.b=command-line"], probes)
    probe = settings.model_copy(update={"reporters": {"probe": settings.reporters["probe"]}})
    printed = write_reports(
        Report(), Store(tmp_path / "out"), report_plugins(probe, probes)
    ).printed
    assert json.loads(printed["probe"])["b"] == "command-line"
    assert json.loads(printed["probe"])["a"] == "file"


def test_an_issue_source_gets_its_options_from_the_file_and_the_command_line(
    probes: Plugins, tmp_path: Path
) -> None:
    config = {"issue-sources": {"github": None, "probe": {"issue-source": "probe", "a": "file"}}}
    root = project(tmp_path, config)
    overrides = ["issue-sources.probe.b=command-line", "~issue-sources.file"]
    settings, _ = compose_settings(root, overrides, probes)
    sources = issue_resolver(settings, probes, SilentProgress()).sources
    assert [name for name, _ in sources] == ["commit", "probe"]
    source = sources[1][1]
    assert (source.options.a, source.options.b) == ("file", "command-line")


def test_two_instances_of_one_issue_source_are_asked_in_order(
    probes: Plugins, tmp_path: Path
) -> None:
    """Entries are asked in the map's order; ``order`` puts one before the others."""
    config = {
        "issue-sources": {
            "first": {"issue-source": "probe", "a": "one"},
            "second": {"issue-source": "probe", "a": "two", "order": -1},
        }
    }
    root = project(tmp_path, config)
    settings, _ = compose_settings(root, [], probes)
    sources = issue_resolver(settings, probes, SilentProgress()).sources
    assert [name for name, _ in sources] == ["second", "github", "file", "commit", "first"]
    assert sources[0][1].options.a == "two"


def test_an_instance_that_names_no_plugin_or_a_wrong_option_is_one_line(
    probes: Plugins, tmp_path: Path
) -> None:
    from bugbout.core.pipeline import check_plugins

    root = project(tmp_path, {"issue-sources": {"mine": {"a": "x"}}})
    settings, _ = compose_settings(root, [], probes)
    with pytest.raises(ConfigError, match=r"^issue-sources\.mine names no plugin; add "):
        check_plugins(settings, probes)
    settings, _ = compose_settings(root, ["+issue-sources.mine.issue-source=probe"], probes)
    check_plugins(settings, probes)
    with pytest.raises(ConfigError, match=r"^issue-sources\.file\.pth: no such setting; did"):
        compose_settings(root, ["issue-sources.file.pth=x"], probes)
    root = project(tmp_path, {"issue-sources": {"file": {"pth": "x"}}})
    settings, _ = compose_settings(root, [], probes)
    with pytest.raises(ConfigError, match=r"^issue-sources\.file: issue-source 'file': pth: "):
        check_plugins(settings, probes)


def test_every_kind_is_covered() -> None:
    """Each kind has its test above; the kinds of one plugin per bout are settings keys."""
    multiple = {"agent", "assignment", "reporter", "issue-source"}
    assert {"reporters", "issue_sources"} <= set(BoutSettings.model_fields)
    assert set(KINDS) == set(GROUPS) | multiple
    assert {kind.replace("-", "_") for kind in GROUPS} <= set(BoutSettings.model_fields)


# -- the old spellings ------------------------------------------------------------------------
