"""Choosing plugins, one way for every kind: a setting given in ``bugbout.yaml`` and one
given on the command line both reach the plugin the core builds; old spellings still work."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel, ConfigDict

from bugbout import hookimpl
from bugbout.config import HydraJob, compose_settings, run_with_hydra
from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.manager import Plugins, make_plugins
from bugbout.core.contract.settings import BoutSettings, VerdictsSettings
from bugbout.core.contract.types import KINDS, PluginSpec
from bugbout.core.plumbing.executor import make_executor
from bugbout.core.plumbing.progress import SilentProgress
from bugbout.core.plumbing.tools import Tools
from bugbout.core.race.contestants import build_contestants
from bugbout.core.report.report import Report
from bugbout.core.report.reporters import write_reports
from bugbout.core.store.records import Task, TaskIssue, TaskSet
from bugbout.core.store.store import Store
from bugbout.core.tasks import issue_resolver, mine_tasks
from bugbout.core.verdicts import Verdicts, make_auditor
from bugbout.ui import Console


class ProbeOptions(BaseModel):
    """Two options to set, one in ``bugbout.yaml`` and one on the command line."""

    model_config = ConfigDict(extra="forbid")

    a: str = "default"
    b: str = "default"
    name: str = ""  # an agent is given its contestant's name


class Probe:
    """Any kind's implementation: it keeps the options it was built with."""

    filename = None  # a reporter that prints
    name = "probe"  # a sandbox's name

    def __init__(self, options: ProbeOptions) -> None:
        self.options = options

    def mine(self, request: object, titles: object) -> TaskSet:
        """A miner that finds nothing and names its options as the reason."""
        found = TaskSet()
        found.exclude(self.options.model_dump_json())
        return found

    def problem(self) -> None:  # an executor that can run here
        return None

    def close(self) -> None:
        return None

    def render(self, report: Report) -> str:
        return self.options.model_dump_json()

    def prompt(self, task: Task, *, tests: str, test_command: str) -> str:  # an assignment's
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
    if kind == "judge":
        return Verdicts(tools).judge
    return make_auditor(tools)


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


TASK = Task(
    id="t", sha="0123abcd", parent="p", date="2024-01-01T00:00:00+00:00", title="Fix",
    issue=TaskIssue(number=1), source_files=["a.py"], test_files=["tests/test_a.py"],
)  # fmt: skip


def assigned(settings: BoutSettings, plugins: Plugins) -> dict[str, dict[str, str]]:
    """The options each examiner's assignment was built with, read from its prompt."""
    return {
        racer.name: json.loads(racer.prompt(TASK, tests="tests", test_command="pytest"))
        for racer in build_contestants(settings, plugins)
    }


def test_an_assignment_gets_its_options_from_the_file_and_the_command_line(
    probes: Plugins, tmp_path: Path
) -> None:
    """An examiner's ``assignment`` is a name, or a map naming its plugin under
    ``assignment`` with that plugin's options, set in the file or on the command line."""
    entry = {"agent": "probe", "assignment": {"assignment": "probe", "a": "file"}}
    root = project(tmp_path, {"examiners": {"mine": entry}})
    for override in ("examiners.mine.assignment.b=line", "examiner.mine.assignment.b=line"):
        settings, _ = compose_settings(root, [override], probes)
        assert assigned(settings, probes)["mine"] == {"a": "file", "b": "line", "name": ""}
    root = project(tmp_path, {"examiners": {"mine": {"agent": "probe", "assignment": "specify"}}})
    settings, _ = compose_settings(
        root, ["examiners.mine.assignment={assignment: probe, a: line}"], probes
    )
    assert assigned(settings, probes)["mine"]["a"] == "line"
    overrides = ["examiner=probe", "examiner.probe.assignment={assignment: probe, b: line}"]
    settings, _ = compose_settings(root, overrides, probes)
    assert assigned(settings, probes) == {"probe": {"a": "default", "b": "line", "name": ""}}


def test_a_wrong_assignment_or_option_is_one_line_naming_the_entry(
    probes: Plugins, tmp_path: Path
) -> None:
    entry = {"agent": "probe", "assignment": {"assignment": "probe", "c": "x"}}
    root = project(tmp_path, {"examiners": {"mine": entry}})
    settings, _ = compose_settings(root, [], probes)
    with pytest.raises(ConfigError, match=r"^examiners\.mine\.assignment: assignment 'probe': c: "):
        build_contestants(settings, probes)
    settings, _ = compose_settings(root, ["examiners.mine.assignment.assignment=edges"], probes)
    with pytest.raises(
        ConfigError, match=r"^examiners\.mine\.assignment: no assignment plugin named 'edges'; "
    ):
        build_contestants(settings, probes)
    settings, _ = compose_settings(root, ["examiner=probe", "examiner.probe.assignment=e"], probes)
    with pytest.raises(ConfigError, match=r"^examiner\.probe\.assignment: no assignment plugin "):
        build_contestants(settings, probes)
    overrides = ["examiner=probe", "examiner.probe.assignment.a=x"]
    with pytest.raises(
        ConfigError, match=r"^examiner\.probe\.assignment\.a: no such setting \(valid keys under "
    ):  # its assignment is reproduce, which takes no options
        compose_settings(root, overrides, probes)
    with pytest.raises(
        ConfigError, match=r"^examiners\.mine\.assignment\.d: no such setting \(valid keys under "
    ):
        compose_settings(root, ["examiners.mine.assignment.d=1"], probes)


def test_a_wrong_agent_option_is_one_line_naming_the_entry(probes: Plugins, tmp_path: Path) -> None:
    root = project(tmp_path, {"contestants": {"mine": {"agent": "command", "command": []}}})
    settings, _ = compose_settings(root, [], probes)
    with pytest.raises(ConfigError, match=r"^contestants\.mine: agent 'command': command: ") as bad:
        build_contestants(settings, probes)
    assert "\n" not in str(bad.value)
    overrides = ["contestants.mine.command=[x]", "examiner=codex", "examiner.codex.quota=[1]"]
    settings, _ = compose_settings(root, overrides, probes)
    with pytest.raises(ConfigError, match=r"^examiner\.codex: agent 'codex': quota: "):
        build_contestants(settings, probes)


def test_a_contestant_added_on_the_command_line_can_be_chosen_by_name(
    probes: Plugins, tmp_path: Path
) -> None:
    root = project(tmp_path, {"contestants": {"mine": {"agent": "command", "command": ["x"]}}})
    added = "+contestants.fresh={agent: command, command: [y]}"
    settings, _ = compose_settings(root, [added, "contestant=fresh"], probes)
    assert [racer.name for racer in build_contestants(settings, probes)] == ["fresh"]
    with pytest.raises(ConfigError, match=r"^contestants\.codex: contestant 'codex' has the name"):
        compose_settings(root, ["+contestants.codex={agent: command}"], probes)


def test_an_assignments_options_are_in_the_attempts_key_when_set(
    probes: Plugins, tmp_path: Path
) -> None:
    """The key of an examiner given its assignment by name is the one it had before
    assignments took options, so stored attempts are found again; options that differ
    from the plugin's defaults make another key."""

    def key(assignment: object) -> str:
        """The key of examiner ``spec`` given ``assignment`` (``None``: left out)."""
        examiner: dict[str, Any] = {"agent": "command", "command": ["true"]}
        if assignment is not None:
            examiner["assignment"] = assignment
        settings = BoutSettings.model_validate(
            {"project": {"source": "src/p"}, "examiners": {"spec": examiner}}
        )
        (racer,) = build_contestants(settings, probes)
        return racer.key(TASK)

    assert key("specify") == key({"assignment": "specify"}) == "cf9e7c425063fcdc"
    assert key(None) == "0cb7e075965e7e6b"  # reproduce, the default
    assert key("probe") == key({"assignment": "probe", "a": "default"})
    assert len({key("probe"), key({"assignment": "probe", "a": "x"}), key("specify")}) == 3


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
    probe = {"probe": settings.reporters["probe"]}
    printed = write_reports(Report(), Store(tmp_path / "out"), probes, probe).printed
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
    from bugbout.core.tasks import check_plugins

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


def test_lists_of_reporters_and_issue_sources_in_bugbout_yaml_still_work(
    probes: Plugins, tmp_path: Path
) -> None:
    """``reporters: [...]``, ``reporter:``, ``tasks.issue-sources: [...]`` and
    ``issue-source:`` as written before they were maps: exactly the plugins listed, in
    their order, with their options, and a note each."""
    notes: list[str] = []
    config = {
        "reporters": ["probe", "json"],
        "reporter": {"probe": {"a": "file"}, "html": {"title": "Not written"}},
        "tasks": {"issue-sources": ["probe", "commit"], "reruns": 3},
        "issue-source": {"probe": {"a": "file"}, "github": {"timeout": 2}},
    }
    root = project(tmp_path, config)
    settings, _ = compose_settings(root, ["reporter.probe.b=line"], probes, notes.append)
    written = write_reports(Report(), Store(tmp_path / "out"), probes, settings.reporters)
    assert written.files == ["report.json"]
    assert json.loads(written.printed["probe"])["a"] == "file"
    assert json.loads(written.printed["probe"])["b"] == "line"
    sources = issue_resolver(settings, probes, SilentProgress()).sources
    assert [name for name, _ in sources] == ["probe", "commit"]
    assert sources[0][1].options.a == "file"
    assert settings.tasks.reruns == 3
    where = root / "bugbout.yaml"
    assert notes == [
        "reporter.probe.b=line: `reporter` is now `reporters`; write reporters.probe.b=line "
        "(reporter still works)",
        f"{where}: `reporters: [...]` is now `reporters: {{terminal: null, markdown: null, "
        "html: null, probe: {reporter: probe, order: 0}, json: {reporter: json, order: 1}}`; "
        "rename it "
        "(reporters still works)",
        f"{where}: `tasks.issue-sources: [...]` is now `issue-sources: {{github: null, "
        "file: null, probe: {issue-source: probe, order: 0}, commit: {issue-source: commit, "
        "order: 1}}`; rename it (tasks.issue-sources still works)",
        f"{where}: `issue-source:` is now `issue-sources:`; rename it (issue-source still works)",
        f"{where}: `reporter:` is now `reporters:`; rename it (reporter still works)",
    ]


def test_lists_of_reporters_and_issue_sources_on_the_command_line_still_work(
    probes: Plugins, tmp_path: Path
) -> None:
    notes: list[str] = []
    root = project(tmp_path, {"reporters": {"html": {"title": "Mine"}}})
    overrides = ["tasks.issue-sources=[probe,commit]", "reporters=[json,probe]"]
    settings, _ = compose_settings(root, overrides, probes, notes.append)
    written = write_reports(Report(), Store(tmp_path / "out"), probes, settings.reporters)
    assert (written.files, list(written.printed)) == (["report.json"], ["probe"])
    sources = issue_resolver(settings, probes, SilentProgress()).sources
    assert [name for name, _ in sources] == ["probe", "commit"]
    assert notes == [
        "tasks.issue-sources=[probe,commit]: `tasks.issue-sources` is now `issue-sources`, "
        "a map of instances by name now; write ~issue-sources.github ~issue-sources.file "
        "+issue-sources.probe={issue-source: probe} and give each its place, "
        "issue-sources.NAME.order=0, 1, ... (the list still works)",
        "reporters=[json,probe]: `reporters` is a map of instances by name now; write "
        "~reporters.terminal ~reporters.markdown ~reporters.html "
        "+reporters.probe={reporter: probe} (the list still works)",
    ]


def test_moving_run_suite_keeps_the_stores_evidence_keys() -> None:
    """The matrix's key holds ``run-suite`` on its own, as when it was the judge's; the
    other evidence keys hold the rest of ``verdicts:`` only, as before it moved there."""
    assert VerdictsSettings(run_suite=False).key() == VerdictsSettings().key()
    assert VerdictsSettings(timeout=5).key() != VerdictsSettings().key()


ROLES = ["contestant", "examiner"]


def racing(settings: BoutSettings, plugins: Plugins) -> dict[str, list[str]]:
    """The names of the contestants and of the examiners the core builds, by role."""
    racers = build_contestants(settings, plugins)
    return {role: [racer.name for racer in racers if racer.role == role] for role in ROLES}


def defined_agents(root: Path) -> Path:
    """Two contestants and an examiner defined in ``bugbout.yaml``."""
    agent = {"agent": "probe"}
    examiner = {**agent, "assignment": "probe"}
    return project(root, {"contestants": {"a": agent, "b": agent}, "examiners": {"x": examiner}})


@pytest.mark.parametrize("role", ROLES)
def test_choosing_none_of_a_role_races_none_of_it(
    role: str, probes: Plugins, tmp_path: Path
) -> None:
    """``examiner=[]`` chooses no examiner (``contestant=[]`` no contestant), the others
    all race; choosing nothing races every one defined, in a sweep's jobs too."""
    root = defined_agents(tmp_path)
    every = {"contestant": ["a", "b"], "examiner": ["x"]}
    settings, _ = compose_settings(root, [], probes)
    assert racing(settings, probes) == every
    settings, _ = compose_settings(root, [f"{role}=[]"], probes)
    assert racing(settings, probes) == {**every, role: []}
    settings, _ = compose_settings(root, ["contestant=b", "examiner=[]"], probes)
    assert racing(settings, probes) == {"contestant": ["b"], "examiner": []}


def test_a_sweep_with_no_examiner_races_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``bugbout run -m contestant=a,b 'examiner=[]'``: no job races an examiner."""
    command = {"agent": "command", "command": ["bugbout-no-such-program"]}
    config = {
        "contestants": {"a": command, "b": command},
        "examiners": {"x": {**command, "assignment": "reproduce"}},
    }
    monkeypatch.chdir(project(tmp_path, config))
    jobs: list[dict[str, list[str]]] = []

    def job(settings: BoutSettings, plugins: Plugins, hydra_job: HydraJob) -> None:
        jobs.append(racing(settings, plugins))

    args = ["-m", "contestant=a,b", "examiner=[]"]
    assert run_with_hydra("run", args, Console(quiet=True), job) == 0
    assert jobs == [{"contestant": ["a"], "examiner": []}, {"contestant": ["b"], "examiner": []}]


@pytest.mark.parametrize("role", ROLES)
def test_a_defined_agent_set_to_null_is_removed(role: str, probes: Plugins, tmp_path: Path) -> None:
    """``contestants.a=null`` removes ``a``, as ``reporters.html=null`` removes a reporter."""
    agent = {"agent": "probe", "assignment": "probe"} if role == "examiner" else {"agent": "probe"}
    root = project(tmp_path, {f"{role}s": {"a": agent, "b": agent}})
    settings, _ = compose_settings(root, [f"{role}s.a=null"], probes)
    assert racing(settings, probes)[role] == ["b"]


@pytest.mark.parametrize("role", ROLES)
def test_an_agent_that_names_no_agent_is_one_line_naming_the_entry(
    role: str, probes: Plugins, tmp_path: Path
) -> None:
    root = project(tmp_path, {f"{role}s": {"mine": {"a": "file"}}})
    settings, _ = compose_settings(root, [], probes)
    with pytest.raises(
        ConfigError,
        match=rf"^{role}s\.mine names no plugin; add `agent: <plugin>` to it, e\.g\. "
        rf"`{role}s: {{mine: {{agent: codex}}}}`$",
    ):
        build_contestants(settings, probes)


def test_an_assignment_map_that_names_no_assignment_is_one_line(
    probes: Plugins, tmp_path: Path
) -> None:
    """A map without ``assignment:`` is a mistake, not the default ``reproduce``."""
    root = project(tmp_path, {"examiners": {"mine": {"agent": "probe", "assignment": "probe"}}})
    settings, _ = compose_settings(root, ["examiners.mine.assignment={a: x}"], probes)
    with pytest.raises(
        ConfigError,
        match=r"^examiners\.mine\.assignment names no plugin; add `assignment: <plugin>` to it",
    ):
        build_contestants(settings, probes)


def test_a_run_with_no_contestant_left_is_the_one_line_error(tmp_path: Path) -> None:
    """``bugbout run 'contestant=[]'`` leaves the examiners alone, with nothing to examine."""
    command = {"agent": "command", "command": ["bugbout-no-such-program"]}
    root = project(tmp_path, {"contestants": {"a": command}, "examiners": {"x": command}})
    ran = subprocess.run(
        [sys.executable, "-m", "bugbout", "run", "contestant=[]"],
        cwd=root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert (ran.returncode, ran.stdout) == (2, "")
    assert ran.stderr.startswith("error: no contestants: define some under `contestants:`")
    assert ran.stderr.count("\n") == 1


def test_a_contestant_set_to_null_in_the_file_is_removed(probes: Plugins, tmp_path: Path) -> None:
    entries = {"kept": {"agent": "command", "command": ["x"]}, "gone": None}
    root = project(tmp_path, {"contestants": entries})
    settings, _ = compose_settings(root, [], probes)
    assert [racer.name for racer in build_contestants(settings, probes)] == ["kept"]
