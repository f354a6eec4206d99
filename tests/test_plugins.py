"""The plugin manager: built-ins, entry-point plugins, and the errors plugin authors meet."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from bugbout import JudgePlugin, MinerPlugin, ReporterPlugin, hookimpl
from bugbout.config import compose_settings
from bugbout.core.contract.errors import ConfigError, PluginError
from bugbout.core.contract.manager import Plugins, make_plugins
from bugbout.core.contract.types import KINDS, NoOptions, Options
from bugbout.core.race.contestants import build_contestants

TOY_PLUGIN = """
from pydantic import BaseModel, ConfigDict

from bugbout import MinerPlugin, hookimpl
from bugbout.core.store.records import TaskSet


class ToyOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    examined: int = 42


class ToyMiner:
    def __init__(self, options):
        self.options = options

    def mine(self, request, titles=None):
        return TaskSet(examined=self.options.examined, excluded={"toy": self.options.examined})


@hookimpl
def bugbout_miners():
    yield MinerPlugin(name="toy", factory=ToyMiner, options=ToyOptions, description="a toy miner")
"""


def install_distribution(site: Path, name: str, version: str, entry_points: dict[str, str],
                         modules: dict[str, str]) -> None:  # fmt: skip
    """Put a distribution on ``site`` as an installer would: a dist-info and its modules."""
    dist_info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    )
    lines = "".join(f"{key} = {value}\n" for key, value in entry_points.items())
    (dist_info / "entry_points.txt").write_text(f"[bugbout]\n{lines}")
    for module, source in modules.items():
        (site / f"{module}.py").write_text(textwrap.dedent(source))


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory on ``sys.path`` (and on ``PYTHONPATH`` for subprocesses)."""
    directory = tmp_path / "site"
    directory.mkdir()
    monkeypatch.syspath_prepend(str(directory))
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join([str(directory), os.environ.get("PYTHONPATH", "")])
    )
    return directory


def test_builtins_are_listed_by_kind(plugins: Plugins) -> None:
    names = {(plugin.kind, plugin.name) for plugin in plugins.all()}
    assert names >= {
        ("miner", "git-history"),
        ("issue-source", "github"),
        ("issue-source", "file"),
        ("issue-source", "commit"),
        ("environment", "uv"),
        ("environment", "interpreter"),
    }
    assert {plugin.distribution for plugin in plugins.all()} == {"bugbout"}
    assert plugins.problems == []


def test_every_kind_has_a_registration_hook(plugins: Plugins) -> None:
    for kind, spec in KINDS.items():
        assert hasattr(plugins.hook, spec.hook), kind
        assert plugins.of_kind(kind), f"no built-in {kind} plugin is registered"


def test_every_builtin_options_model_extends_options(plugins: Plugins) -> None:
    """One base for every options model: unknown keys are errors, keys are dashed."""
    loose = [
        f"{plugin.kind} {plugin.name}: {plugin.spec.options.__name__}"
        for plugin in plugins.all()
        if not issubclass(plugin.spec.options, Options)
    ]
    assert loose == []


def test_third_party_plugin_is_listed_and_selectable(site: Path, tmp_path: Path) -> None:
    install_distribution(
        site, "bugbout-toy", "1.0", {"toy": "bugbout_toy"}, {"bugbout_toy": TOY_PLUGIN}
    )
    plugins = make_plugins()
    toy = plugins.get("miner", "toy")
    assert toy.distribution == "bugbout-toy 1.0"
    listing = subprocess.run(
        [sys.executable, "-m", "bugbout", "plugins"], capture_output=True, text=True, check=True
    )
    row = next(line for line in listing.stdout.splitlines() if " toy " in line)
    assert row.split()[:4] == ["miner", "toy", "bugbout-toy", "1.0"]
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "bugbout.yaml").write_text("defaults: [base, _self_]\nproject:\n  source: pkg\n")
    result = subprocess.run(
        [sys.executable, "-m", "bugbout", "tasks", "miner=toy", "+miner.examined=7"],
        cwd=repo, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    tasks = json.loads((repo / ".bugbout" / "tasks.json").read_text())
    assert tasks == {"examined": 7, "excluded": {"toy": 7}, "tasks": []}


def test_plugin_that_fails_to_import_is_skipped_with_a_warning(site: Path) -> None:
    install_distribution(site, "bugbout-broken", "0.1", {"broken": "bugbout_broken"},
                         {"bugbout_broken": "import not_installed_anywhere\n"})  # fmt: skip
    plugins = make_plugins()
    assert plugins.problems == [
        "plugin 'broken' from bugbout-broken 0.1 failed to import and was skipped: "
        "ModuleNotFoundError: No module named 'not_installed_anywhere'"
    ]
    assert "git-history" in plugins.of_kind("miner")


def test_two_plugins_with_one_name_are_an_error_naming_both(site: Path) -> None:
    clash = TOY_PLUGIN.replace('name="toy"', 'name="git-history"')
    install_distribution(
        site, "bugbout-clash", "2.0", {"clash": "bugbout_clash"}, {"bugbout_clash": clash}
    )
    with pytest.raises(PluginError) as error:
        make_plugins()
    message = str(error.value)
    assert "two miner plugins are named 'git-history'" in message
    assert "from bugbout (" in message
    assert "from bugbout-clash 2.0" in message


def test_disabling_autoload_and_blocking(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_distribution(
        site, "bugbout-toy", "1.0", {"toy": "bugbout_toy"}, {"bugbout_toy": TOY_PLUGIN}
    )
    assert "toy" not in make_plugins(blocked=["toy"]).of_kind("miner")
    monkeypatch.setenv("BUGBOUT_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert "toy" not in make_plugins().of_kind("miner")


def test_misspelt_hook_is_reported_and_skipped(plugins: Plugins) -> None:
    class Misspelt:
        @hookimpl
        def bugbout_minerz(self) -> list[MinerPlugin]:
            return []

    plugins.register(Misspelt(), name="misspelt")
    plugins.check_pending()
    assert plugins.problems == [
        "plugin 'misspelt' from <inline> skipped: it implements 'bugbout_minerz', "
        "which is not a bugbout hook; did you mean 'bugbout_miners'?"
    ]
    assert "misspelt" not in plugins.distributions


def test_unknown_hook_without_a_close_match_is_reported(plugins: Plugins) -> None:
    class Unknown:
        @hookimpl
        def bugbout_before_everything(self) -> None:
            pass

    plugins.register(Unknown(), name="unknown", distribution="odd 0.1")
    plugins.check_pending()
    assert plugins.problems == [
        "plugin 'unknown' from odd 0.1 skipped: it implements 'bugbout_before_everything', "
        "which is not a bugbout hook (misspelt?)"
    ]


def test_misspelt_hook_argument_is_one_line_and_skips_the_whole_plugin(
    plugins: Plugins,
) -> None:
    class WrongArgument:
        @hookimpl
        def bugbout_judges(self) -> list[JudgePlugin]:
            return [JudgePlugin(name="half", factory=object)]

        @hookimpl
        def bugbout_after_mine(self, taskz: object) -> None:
            pass

    assert plugins.register(WrongArgument(), name="wrong", distribution="wrong 1.0") is None
    assert plugins.problems == [
        "plugin 'wrong' from wrong 1.0 skipped: bugbout_after_mine(taskz) takes 'taskz', "
        "which the hook does not pass (it passes tasks); did you mean 'tasks'?"
    ]
    assert plugins.pm.get_plugin("wrong") is None  # not left half-registered
    assert "half" not in plugins.of_kind("judge")


def test_argument_to_a_registration_hook_is_one_line(plugins: Plugins) -> None:
    class Argument:
        @hookimpl
        def bugbout_reporters(self, report: object) -> list[ReporterPlugin]:
            return []

    assert plugins.register(Argument(), name="arg") is None
    assert plugins.problems == [
        "plugin 'arg' from <inline> skipped: bugbout_reporters(report) takes 'report', "
        "which the hook does not pass (it passes no argument)"
    ]


def test_function_named_like_a_hook_without_hookimpl_is_reported(plugins: Plugins) -> None:
    def bugbout_judges() -> list[JudgePlugin]:
        return [JudgePlugin(name="forgotten", factory=object)]

    module = types.ModuleType("forgetful")
    module.bugbout_judges = bugbout_judges  # type: ignore[attr-defined]
    plugins.register(module, name="forgetful", distribution="forgetful 1.0")
    assert plugins.problems == [
        "plugin 'forgetful' from forgetful 1.0: bugbout_judges is not marked @hookimpl, so "
        "bugbout ignores it; add `from bugbout import hookimpl` and decorate it"
    ]
    assert "forgotten" not in plugins.of_kind("judge")


def test_one_plugin_registered_twice_is_skipped_the_second_time(plugins: Plugins) -> None:
    class Once:
        @hookimpl
        def bugbout_after_mine(self) -> None:
            pass

    once = Once()
    assert plugins.register(once, name="first") == "first"
    assert plugins.register(once, name="second", distribution="dup 1.0") is None
    assert plugins.problems == [
        "plugin 'second' from dup 1.0 skipped: it is already registered as 'first'"
    ]


def test_options_that_are_not_a_model_skip_the_record_naming_the_distribution(
    site: Path,
) -> None:
    invalid = TOY_PLUGIN.replace("options=ToyOptions", "options=dict")
    install_distribution(site, "bugbout-dicty", "0.2", {"dicty": "bugbout_dicty"},
                         {"bugbout_dicty": invalid})  # fmt: skip
    plugins = make_plugins()
    assert plugins.problems == [
        "plugin 'dicty' from bugbout-dicty 0.2 skipped: bugbout_miners() built an invalid "
        "MinerPlugin record: options must be a pydantic model class (a subclass of "
        "BaseModel), not dict"
    ]
    assert "toy" not in plugins.of_kind("miner")
    assert "git-history" in plugins.of_kind("miner")


def test_an_options_instance_is_told_to_pass_the_class(plugins: Plugins) -> None:
    class Instance:
        @hookimpl
        def bugbout_judges(self) -> Iterator[JudgePlugin]:
            yield JudgePlugin(name="inst", factory=object, options=NoOptions())  # type: ignore[arg-type]

    plugins.register(Instance(), name="instance", distribution="inst 1.0")
    assert "inst" not in plugins.of_kind("judge")
    assert plugins.problems == [
        "plugin 'instance' from inst 1.0 skipped: bugbout_judges() built an invalid "
        "JudgePlugin record: options must be a pydantic model class (a subclass of "
        "BaseModel), not a NoOptions instance (pass the class itself)"
    ]


def test_unvalidated_record_with_bad_options_is_skipped_alone(plugins: Plugins) -> None:
    class Unvalidated:
        @hookimpl
        def bugbout_judges(self) -> Iterator[JudgePlugin]:
            yield JudgePlugin.model_construct(name="raw", factory=object, options=dict)
            yield JudgePlugin(name="fine", factory=object)

    plugins.register(Unvalidated(), name="unvalidated", distribution="raw 1.0")
    judges = plugins.of_kind("judge")
    assert "raw" not in judges
    assert judges["fine"].distribution == "raw 1.0"
    assert plugins.problems == [
        "plugin 'unvalidated' from raw 1.0: judge 'raw' skipped: options must be a pydantic "
        "model class (a subclass of BaseModel), not dict"
    ]


def test_options_model_that_ignores_unknown_keys_is_warned_about(plugins: Plugins) -> None:
    class LooseOptions(BaseModel):
        threshold: float = 0.5

    class Loose:
        @hookimpl
        def bugbout_judges(self) -> Iterator[JudgePlugin]:
            yield JudgePlugin(name="loose", factory=lambda options: options, options=LooseOptions)

    plugins.register(Loose(), name="loose", distribution="loose 1.0")
    assert plugins.create("judge", "loose", {"threshold": 0.7}).threshold == 0.7
    plugins.all()  # collecting again reports nothing twice
    assert plugins.problems == [
        "plugin 'loose' from loose 1.0: judge 'loose' ignores unknown options (LooseOptions "
        'does not set extra="forbid"), so a misspelt option goes unnoticed'
    ]


def test_invalid_plugin_name_is_one_line(plugins: Plugins) -> None:
    class BadName:
        @hookimpl
        def bugbout_reporters(self) -> Iterator[ReporterPlugin]:
            yield ReporterPlugin(name="My Dashboard", factory=object)

    plugins.register(BadName(), name="badname", distribution="dash 1.0")
    assert plugins.of_kind("reporter").keys() >= {"markdown"}
    assert plugins.problems == [
        "plugin 'badname' from dash 1.0 skipped: bugbout_reporters() built an invalid "
        "ReporterPlugin record: name: 'my dashboard' is not a valid plugin name "
        "(use lowercase words and -)"
    ]


def test_two_plugins_in_one_environment_claiming_one_judge_name(plugins: Plugins) -> None:
    class Cautious:
        @hookimpl
        def bugbout_judges(self) -> Iterator[JudgePlugin]:
            yield JudgePlugin(name="cautious", factory=object)

    plugins.register(Cautious(), name="one", distribution="cautious-a 1.0")
    plugins.register(Cautious(), name="two", distribution="cautious-b 2.0")
    with pytest.raises(PluginError) as error:
        plugins.of_kind("judge")
    assert str(error.value) == (
        "two judge plugins are named 'cautious': one from cautious-b 2.0 (two), one from "
        "cautious-a 1.0 (one); uninstall or rename one"
    )


def test_broken_plugins_are_reported_when_the_manager_is_built(site: Path) -> None:
    raising = TOY_PLUGIN.replace("yield MinerPlugin", "raise RuntimeError('no'); yield MinerPlugin")
    install_distribution(site, "bugbout-raising", "3.0", {"raising": "bugbout_raising"},
                         {"bugbout_raising": raising})  # fmt: skip
    plugins = make_plugins()
    assert plugins.problems == [
        "plugin 'raising' from bugbout-raising 3.0 skipped: "
        "bugbout_miners() raised RuntimeError: no"
    ]


def test_lifecycle_hook_that_raises_is_reported_not_fatal(plugins: Plugins) -> None:
    class Crashing:
        @hookimpl
        def bugbout_after_mine(self, tasks: object) -> None:
            raise ValueError("listener broke")

    seen: list[object] = []

    class Listening:
        @hookimpl
        def bugbout_after_mine(self, tasks: object) -> None:
            seen.append(tasks)

    plugins.register(Crashing(), name="crashing", distribution="crashy 1.0")
    plugins.register(Listening(), name="listening")
    plugins.notify("bugbout_after_mine", tasks="the tasks")
    assert plugins.problems == [
        "plugin 'crashing' from crashy 1.0: bugbout_after_mine() raised ValueError: listener broke"
    ]
    assert seen == ["the tasks"]


def test_a_several_line_error_from_a_plugin_is_reported_on_one_line(plugins: Plugins) -> None:
    class Crashing:
        @hookimpl
        def bugbout_after_oracle(self, oracle: object) -> None:
            raise RuntimeError("first line\n  second line\n")

    plugins.register(Crashing(), name="crashing", distribution="crashy 1.0")
    plugins.notify("bugbout_after_oracle", oracle=None)
    assert plugins.problems == [
        "plugin 'crashing' from crashy 1.0: bugbout_after_oracle() raised "
        "RuntimeError: first line second line"
    ]


def test_registration_hook_that_raises_is_skipped(plugins: Plugins) -> None:
    class Crashing:
        @hookimpl
        def bugbout_miners(self) -> list[MinerPlugin]:
            raise RuntimeError("boom")

    plugins.register(Crashing(), name="crashing", distribution="crashy 1.0")
    assert "git-history" in plugins.of_kind("miner")
    assert plugins.problems == [
        "plugin 'crashing' from crashy 1.0 skipped: bugbout_miners() raised RuntimeError: boom"
    ]


def test_unknown_name_lists_the_valid_ones(plugins: Plugins) -> None:
    with pytest.raises(
        ConfigError,
        match=r"no environment plugin named 'conda'; choose one of: interpreter, podman, uv",
    ):
        plugins.get("environment", "conda")


def test_misspelt_option_names_the_plugin_and_valid_keys(plugins: Plugins) -> None:
    with pytest.raises(ConfigError) as error:
        plugins.create("environment", "uv", {"exclude-newr": True})
    assert str(error.value) == (
        "environment 'uv': exclude-newr: Extra inputs are not permitted "
        "(valid options: exclude-newer, index-url, python-downloads, test-extras)"
    )


def test_plugin_names_are_normalised_and_checked() -> None:
    assert MinerPlugin(name="My_Miner", factory=object).name == "my-miner"
    with pytest.raises(ValueError, match="not a valid plugin name"):
        MinerPlugin(name="bad name!", factory=object)


def test_lifecycle_hooks_receive_the_stored_records(
    plugins: Plugins, calc_repo: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    from bugbout.core.store.store import Store
    from bugbout.core.tasks import mine_tasks
    from history import calc_settings

    seen: list[int] = []

    class Listener:
        @hookimpl
        def bugbout_after_mine(self, tasks: object) -> None:
            seen.append(len(tasks.tasks))  # type: ignore[attr-defined]

    plugins.register(Listener(), name="listener")
    mine_tasks(calc_settings(calc_repo[0]), plugins, Store(tmp_path / ".bugbout"))
    assert seen == [7]


def test_a_kind_is_named_by_its_record_type_or_its_word(plugins: Plugins) -> None:
    """``create(JudgePlugin, ...)`` is the typed spelling of ``create("judge", ...)``."""
    judge = plugins.create(JudgePlugin, "cross-vendor", {"threshold": 1.0})
    assert judge.name == "cross-vendor"
    assert judge.options.threshold == 1.0
    assert plugins.create("judge", "majority").name == "majority"
    with pytest.raises(ConfigError, match=r"^no reporter plugin named 'majority'; choose one"):
        plugins.create(ReporterPlugin, "majority")


def test_dashed_option_keys_and_python_names_are_both_accepted(plugins: Plugins) -> None:
    """Every built-in options model extends ``Options``: keys as written in YAML, or as
    Python names from code, with a misspelling still an error."""
    for options in ({"keep-assignments": ["specify"]}, {"keep_assignments": ["specify"]}):
        assert plugins.create(JudgePlugin, "strict", options).keep_assignments == ["specify"]
    with pytest.raises(ConfigError, match="keep-assigments"):
        plugins.create(JudgePlugin, "strict", {"keep-assigments": []})


EDGES_PLUGIN = """
from bugbout import {record}, hookimpl
from bugbout.core.race.examining import PromptAssignment


@hookimpl
def {hook}():
    yield {record}(
        name="{name}",
        factory=lambda options: PromptAssignment("{name}", "Test the edges.", True),
    )
"""


def examiner_given(plugins: Plugins, tmp_path: Path, assignment: str) -> Any:
    """The assignment the core gives an examiner whose entry names ``assignment``."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "bugbout.yaml").write_text(
        "defaults: [base, _self_]\nproject:\n  source: pkg\nexaminers:\n"
        f"  probe: {{agent: command, command: [probe], assignment: {assignment}}}\n"
    )
    settings, _ = compose_settings(repo, [], plugins)
    (probe,) = build_contestants(settings, plugins)
    return probe.assignment


def listed(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bugbout", "plugins", *args],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_an_assignment_plugin_is_listed_as_one_and_given_to_an_examiner(
    site: Path, tmp_path: Path
) -> None:
    """The plugin kind an examiner's ``assignment`` names is the assignment kind."""
    source = EDGES_PLUGIN.format(
        record="AssignmentPlugin", hook="bugbout_assignments", name="edges"
    )
    install_distribution(site, "bugbout-edges", "1.0", {"edges": "bugbout_edges"},
                         {"bugbout_edges": source})  # fmt: skip
    plugins = make_plugins()
    assert plugins.problems == []
    assert plugins.get("assignment", "edges").distribution == "bugbout-edges 1.0"
    assert examiner_given(plugins, tmp_path, "edges").name == "edges"
    listing = listed()
    assert listing.returncode == 0, listing.stderr
    rows = [line.split()[:3] for line in listing.stdout.splitlines()]
    assert ["assignment", "edges", "bugbout-edges"] in rows
    assert ["assignment", "reproduce", "bugbout"] in rows
    assert "examiner" not in {row[0] for row in rows if row}


def test_a_plugin_on_the_old_examiners_hook_still_works_with_a_note(
    site: Path, tmp_path: Path
) -> None:
    """A plugin written before the kind was renamed: ``bugbout_examiners`` yielding
    ``ExaminerPlugin`` records is an assignment still, and told the new names."""
    source = EDGES_PLUGIN.format(record="ExaminerPlugin", hook="bugbout_examiners", name="old")
    install_distribution(site, "bugbout-old", "0.9", {"old": "bugbout_old"},
                         {"bugbout_old": source})  # fmt: skip
    with pytest.warns(DeprecationWarning, match="ExaminerPlugin is now AssignmentPlugin"):
        plugins = make_plugins()
    note = (
        "plugin 'old' from bugbout-old 0.9: bugbout_examiners() is now bugbout_assignments(); "
        "rename the hook (the old name still works)"
    )
    assert plugins.problems == [note]
    assert examiner_given(plugins, tmp_path, "old").name == "old"
    assert plugins.problems == [note]  # said once, however often the kinds are collected
    listing = listed()
    assert listing.returncode == 0, listing.stderr
    assert ["assignment", "old", "bugbout-old"] in [
        line.split()[:3] for line in listing.stdout.splitlines()
    ]
    assert note in listing.stderr


def test_the_old_kind_word_and_suite_name_say_the_new_ones(plugins: Plugins) -> None:
    with pytest.raises(
        PluginError, match=r"^the plugin kind 'examiner' is now called 'assignment'$"
    ):
        plugins.of_kind("examiner")
    from bugbout.testing.suites import AssignmentSuite

    with pytest.warns(DeprecationWarning, match="ExaminerSuite is now AssignmentSuite"):
        from bugbout.testing.suites import ExaminerSuite
    assert ExaminerSuite is AssignmentSuite
