"""The plugin manager: built-ins, entry-point plugins, plugin names, kinds and options."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bugbout import JudgePlugin, MinerPlugin, ReporterPlugin, hookimpl
from bugbout.core.contract.errors import ConfigError, PluginError
from bugbout.core.contract.manager import Plugins, make_plugins
from bugbout.core.contract.types import KINDS, Options
from plugin_sites import TOY_PLUGIN, install_distribution


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
    assert tasks == {"format": 2, "examined": 7, "excluded": {"toy": 7}, "tasks": []}


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


def test_unknown_name_lists_the_valid_ones(plugins: Plugins) -> None:
    with pytest.raises(
        ConfigError,
        match=r"no environment plugin named 'conda'; choose one of: interpreter, podman, uv",
    ):
        plugins.get("environment", "conda")


def test_a_number_given_for_text_says_to_quote_it(plugins: Plugins) -> None:
    """``model=3.10`` reaches the options as the number 3.1: the error says why."""
    with pytest.raises(ConfigError) as error:
        plugins.create("agent", "command", {"command": ["x"], "model": 3.1})
    assert str(error.value).startswith(
        "agent 'command': model: expects text, not the number 3.1; quote it (YAML and the "
        "command line read an unquoted 3.10 as the number 3.1) (valid options: "
    )


def test_misspelt_option_names_the_plugin_and_valid_keys(plugins: Plugins) -> None:
    with pytest.raises(ConfigError) as error:
        plugins.create("environment", "uv", {"exclude-newr": True})
    assert str(error.value) == (
        "environment 'uv': exclude-newr: no such option; did you mean exclude-newer? "
        "(valid options: exclude-newer, index-url, install-timeout, python-downloads, "
        "test-extras)"
    )


def test_plugin_names_are_normalised_and_checked() -> None:
    assert MinerPlugin(name="My_Miner", factory=object).name == "my-miner"
    with pytest.raises(ValueError, match="not a valid plugin name"):
        MinerPlugin(name="bad name!", factory=object)


def test_lifecycle_hooks_receive_the_stored_records(
    plugins: Plugins, calc_repo: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    from bugbout.core.pipeline import mine_tasks
    from bugbout.core.store.store import Store
    from history import calc_settings

    seen: list[int] = []

    class Listener:
        @hookimpl
        def bugbout_after_mine(self, tasks: object) -> None:
            seen.append(len(tasks.tasks))  # type: ignore[attr-defined]

    plugins.register(Listener(), name="listener")
    mined = mine_tasks(calc_settings(calc_repo[0]), plugins, Store(tmp_path / ".bugbout"))
    assert seen == [len(mined.tasks)] and seen[0] > 0


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
