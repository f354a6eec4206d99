"""``bugbout doctor``'s sandbox line: a sandbox is approved only once pytest, run in it as
a bout runs its tests, passed a test; what failed otherwise. Real sandboxes, real pytest."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from bugbout import SandboxPlugin, hookimpl
from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import BoutSettings, PluginChoice, ProjectSettings
from bugbout.onboarding.doctor.machine import sandbox_check
from bugbout.plugins.sandboxes.bubblewrap import Bubblewrap
from bugbout.plugins.sandboxes.podman import PodmanSandbox, PodmanSandboxOptions
from bugbout.sandbox.confinement import Confinement

STORAGE = f"/var/tmp/bugbout-podman-doctor-tests{os.environ.get('PYTEST_XDIST_WORKER', '')}"
"""Podman's storage for these tests, outside pytest's temporary folders (it holds mounts)."""
STDLIB = Path(os.__file__).resolve().parent


class HiddenStdlib:
    """A third party's sandbox: bubblewrap, with Python's standard library hidden. It
    starts ``/bin/sh``, so its own check passes; no Python starts in it."""

    name = "hidden-stdlib"

    def __init__(self, options: object = None) -> None:
        self.inner = Bubblewrap()

    def problem(self) -> str | None:
        return self.inner.problem()

    def wrap(self, argv: list[str], confinement: Confinement) -> list[str]:
        masked = (*confinement.masked, STDLIB)
        return self.inner.wrap(argv, confinement.model_copy(update={"masked": masked}))


class NestedPodman:
    """A third party's sandbox: podman, started in a user namespace of its own, where it
    cannot mount its storage (exit 125 before the command runs). It claims to work."""

    name = "nested-podman"

    def __init__(self, options: object = None) -> None:
        self.inner = PodmanSandbox(PodmanSandboxOptions(storage=STORAGE))

    def problem(self) -> str | None:
        return None

    def wrap(self, argv: list[str], confinement: Confinement) -> list[str]:
        unshare = shutil.which("unshare") or "unshare"
        return [unshare, "--user", "--map-root-user", "--", *self.inner.wrap(argv, confinement)]


class Plugins:
    @hookimpl
    def bugbout_sandboxes(self) -> Iterator[SandboxPlugin]:
        yield SandboxPlugin(name=HiddenStdlib.name, factory=HiddenStdlib)
        yield SandboxPlugin(name=NestedPodman.name, factory=NestedPodman)


def _line(
    sandbox: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **options: str
) -> tuple[bool, str]:
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "home"))
    plugins = make_plugins(entry_points=False)
    plugins.register(Plugins(), name="third-party")
    settings = BoutSettings(
        project=ProjectSettings(source="src/calc"),
        sandbox=PluginChoice(name=sandbox, **options),
        root=tmp_path,
    )
    check = sandbox_check(settings, plugins)
    return check.ok, check.line


@pytest.mark.requires("podman")
def test_the_podman_sandbox_is_approved_after_a_test_run_in_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ok, line = _line("podman", tmp_path, monkeypatch, storage=STORAGE)
    assert ok, line
    assert line == (
        "ok    sandbox: podman works: pytest passed a test in it, confined as a bout's test "
        "runs are"
    )


@pytest.mark.requires("bubblewrap")
def test_a_sandbox_no_test_runs_in_is_not_approved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ok, line = _line("hidden-stdlib", tmp_path, monkeypatch)
    assert not ok, line
    assert line.startswith(
        "FAIL  sandbox: hidden-stdlib: a test run in it failed: pytest did not pass a test "
        "in it (tampered: exit status 1; "
    ), line
    assert re.search(r"; (Could not find platform|Fatal Python error)", line), line


@pytest.mark.requires("podman")
def test_a_sandbox_whose_test_runs_never_start_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ok, line = _line("nested-podman", tmp_path, monkeypatch)
    assert not ok, line
    assert "a test run in it failed: the doctor test run never started (exit status 125" in line
    assert "operation not permitted" in line
