"""The errors plugin authors meet: misspelt hooks, bad options, hooks that raise; each said on
one line, skipping only its plugin."""

from __future__ import annotations

import types
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel

from bugbout import JudgePlugin, MinerPlugin, ReporterPlugin, hookimpl
from bugbout.core.contract.manager import Plugins, make_plugins
from bugbout.core.contract.types import NoOptions
from plugin_sites import TOY_PLUGIN, install_distribution


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
