"""``bugbout doctor``'s protections line: what a process confined by the chosen sandbox can
do to the host, asked of a real confined process, for any sandbox plugin."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import components
from bugbout import SandboxPlugin, hookimpl
from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import BoutSettings, PluginChoice, ProjectSettings
from bugbout.onboarding.doctor.protections import protections_check
from bugbout.sandbox import identity
from bugbout.sandbox.confinement import Confinement
from bugbout.sandbox.identity import confined_owner


class PlainBwrap:
    """A third party's sandbox: namespaces and no capabilities, as bubblewrap gives them
    by default, and nothing more."""

    name = "plain-bwrap"

    def __init__(self, options: object = None) -> None:
        self.options = options

    def problem(self) -> str | None:
        return None

    def wrap(self, argv: list[str], confinement: Confinement) -> list[str]:
        return ["bwrap", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev",
                "--unshare-pid", "--unshare-net", "--cap-drop", "ALL",
                "--chdir", str(confinement.workdir), "--", *argv]  # fmt: skip


class PlainPlugin:
    @hookimpl
    def bugbout_sandboxes(self) -> Iterator[SandboxPlugin]:
        yield SandboxPlugin(name=PlainBwrap.name, factory=PlainBwrap)


def _line(
    sandbox: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    options: dict[str, object] | None = None,
) -> tuple[bool, str]:
    if shutil.which("bwrap") is None:
        components.missing("bubblewrap", "bwrap is not installed")
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "home"))
    plugins = make_plugins(entry_points=False)
    plugins.register(PlainPlugin(), name="plain")
    settings = BoutSettings(
        project=ProjectSettings(source="src/calc"),
        sandbox=PluginChoice(name=sandbox, **(options or {})),
    )
    check = protections_check(settings, plugins)
    return check.ok, check.line


def test_bubblewrap_holds_the_kernels_settings_and_filters_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ok, line = _line("bubblewrap", tmp_path, monkeypatch)
    assert ok, line
    assert "/proc's kernel settings read-only; a seccomp filter; uid" in line
    who = f"uid {(confined_owner() or (os.geteuid(),))[0]} on the host"  # never root
    assert line.endswith(who), line


@pytest.mark.skipif(os.geteuid() != 0, reason="only root may write the kernel's settings")
def test_a_sandbox_that_leaves_them_writable_fails_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ok, line = _line("plain-bwrap", tmp_path, monkeypatch)
    assert not ok
    assert "/proc/sys/kernel/core_pattern" in line and "writable" in line
    assert "no seccomp filter" in line
    assert "fix: run bugbout as an ordinary user" in line


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's confined processes can be root")
def test_a_sandbox_that_keeps_root_fails_and_says_how_to_drop_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/proc read-only and a seccomp filter are not enough: uid 0 inside is still root
    (here, a machine without setpriv)."""
    monkeypatch.setattr(identity, "setpriv", lambda: None)
    ok, line = _line("bubblewrap", tmp_path, monkeypatch)
    assert not ok, line
    assert line.split("protections: ")[1].startswith(
        "bubblewrap: /proc's kernel settings read-only; a seccomp filter; uid 0 inside is "
        "root on the host"
    ), line
    assert "install setpriv" in line
