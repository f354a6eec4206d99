"""The ``none`` and ``auto`` sandboxes, and how the sandbox plugins register."""

from __future__ import annotations

import shutil
import sys

import pluggy
import pytest

import components
from bugbout.core.contract import hookspecs
from bugbout.core.contract.errors import ConfigError, PluginError
from bugbout.core.contract.manager import Plugins
from bugbout.plugins.sandboxes import auto as auto_module
from bugbout.plugins.sandboxes import bubblewrap as bubblewrap_module
from bugbout.plugins.sandboxes import none as none_module
from bugbout.plugins.sandboxes import seatbelt as seatbelt_module
from bugbout.plugins.sandboxes.auto import Auto
from bugbout.plugins.sandboxes.bubblewrap import Bubblewrap
from bugbout.plugins.sandboxes.none import NoSandbox
from bugbout.plugins.sandboxes.seatbelt import Seatbelt
from bugbout.sandbox.confinement import Confinement
from sandbox_world import ON_LINUX, World


def test_none_leaves_the_command_as_it_is(world: World) -> None:
    sandbox = NoSandbox()
    argv = ["sh", "-c", "echo 'a b'"]
    wrapped = sandbox.wrap(argv, world.confinement())
    assert wrapped == argv and wrapped is not argv
    assert sandbox.problem() is None and sandbox.name == "none"


@pytest.mark.skipif(not ON_LINUX, reason="auto picks bubblewrap on Linux")
def test_auto_chooses_bubblewrap_on_linux(world: World) -> None:
    if shutil.which("bwrap") is None:
        components.missing("bubblewrap", "bwrap is not installed")
    sandbox = Auto()
    assert sandbox.problem() is None
    assert sandbox.chosen is not None and sandbox.chosen.name == "bubblewrap"
    argv = ["true"]
    assert sandbox.wrap(argv, world.confinement()) == Bubblewrap().wrap(argv, world.confinement())


class _Broken:
    name = "broken"

    def __init__(self) -> None:
        self.probes = 0

    def problem(self) -> str | None:
        self.probes += 1
        return "it is broken: fix it"

    def wrap(self, argv: list[str], confinement: Confinement) -> list[str]:
        raise AssertionError("a broken sandbox must not wrap")


def test_auto_says_what_it_tried_and_never_runs_unconfined(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = _Broken()
    monkeypatch.setattr(auto_module, "candidates", lambda: [broken])
    sandbox = Auto()
    problem = sandbox.problem()
    assert problem is not None and "\n" not in problem
    assert "broken: it is broken: fix it" in problem
    assert sandbox.chosen is None
    with pytest.raises(PluginError, match="broken"):
        sandbox.wrap(["true"], world.confinement())
    assert broken.probes == 1


def test_auto_on_an_unknown_platform_points_to_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "sunos5")
    problem = Auto().problem()
    assert problem is not None and "sunos5" in problem and "sandbox=none" in problem


def test_the_plugins_register_with_their_options() -> None:
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    registry = Plugins(pm)
    for module in (bubblewrap_module, seatbelt_module, none_module, auto_module):
        registry.register(module, name=module.__name__)
    assert sorted(registry.of_kind("sandbox")) == ["auto", "bubblewrap", "none", "seatbelt"]
    built = registry.create("sandbox", "bubblewrap", {"hide-run": False, "executable": "bwrap"})
    assert isinstance(built, Bubblewrap) and built.options.hide_run is False
    assert isinstance(registry.create("sandbox", "seatbelt", {"temp-dirs": ["/x"]}), Seatbelt)
    assert isinstance(registry.create("sandbox", "none"), NoSandbox)
    assert isinstance(registry.create("sandbox", "auto"), Auto)
    with pytest.raises(ConfigError, match="hide-run"):
        registry.create("sandbox", "bubblewrap", {"hide_runs": True})
    for name in ("auto", "bubblewrap", "none", "seatbelt"):
        assert registry.get("sandbox", name).spec.description
