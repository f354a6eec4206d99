"""``bugbout doctor``'s machine checks: Python, the guard, the checkout method, podman, and a
wrong project."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

import components
from bugbout.core.contract.settings import BoutSettings, PluginChoice, ProjectSettings
from bugbout.onboarding import doctor
from doctor_runs import bugbout, configured_repo, lines
from python_mirror import downloads_json, hide


def test_machine_checks_pass_here(tmp_path: Path) -> None:
    repo = configured_repo(tmp_path / "repo")
    result = bugbout(cwd=repo / "src")
    assert result.returncode == 0, result.stdout + result.stderr
    found = lines(result)
    assert list(found) == [
        "git", "uv", "python", "sandbox", "protections", "guard", "checkouts", "podman",
        "repository", "project.source", "project.tests",
    ]  # fmt: skip
    assert all(line.startswith("ok    ") for line in found.values()), result.stdout
    assert f"{sys.version_info[0]}.{sys.version_info[1]}" in found["python"]
    assert "no contestants to check" in result.stderr


def test_without_a_config_the_machine_is_still_checked(tmp_path: Path) -> None:
    result = bugbout(cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert list(lines(result)) == [
        "git", "uv", "python", "sandbox", "protections", "guard", "checkouts", "podman",
    ]  # fmt: skip
    assert f"no bugbout.yaml in {tmp_path}" in result.stderr


def test_the_python_line_says_which_eras_the_machine_can_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bugbout.core.contract.manager import make_plugins
    from bugbout.onboarding.doctor.eras import python_check

    hide(monkeypatch, tmp_path / "pyenv", "3.7", "3.8")
    listing = tmp_path / "downloads.json"  # uv offers 3.8 only (never fetched here)
    offered = downloads_json("3.8", 18, "http://127.0.0.1:9/x.tar.gz", "0" * 64)
    listing.write_text(json.dumps(offered))
    monkeypatch.setenv("UV_PYTHON_DOWNLOADS_JSON_URL", str(listing))
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "home"))
    plugins = make_plugins(entry_points=False)

    def line(downloads: str, python: str | None = None) -> str:
        settings = BoutSettings(
            project=ProjectSettings(source="src/calc", python=python),
            environment=PluginChoice(name="uv", **{"python-downloads": downloads}),
        )
        return python_check(settings, plugins).line

    automatic = line("automatic")
    assert automatic.startswith("ok    python: eras found here: ")
    assert "; downloadable by uv: 3.8; neither: 3.7" in automatic
    assert automatic.endswith("(environment.python-downloads=automatic)")
    never = line("never")
    assert "; neither: 3.7, 3.8" in never and "downloadable" not in never
    assert never.endswith("(environment.python-downloads=never)")
    assert line("never", python="3.8").startswith(
        "FAIL  python: project.python is 3.8 but Python 3.8 is neither installed nor downloadable"
    )
    assert line("never", python="3.8").endswith("or set environment.python-downloads=automatic")
    assert line("automatic", python="3.8").startswith("ok    python: eras found here: ")


def test_the_guard_line_says_which_guard_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bugbout.onboarding.doctor.machine import guard_check

    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "without"))
    monkeypatch.setenv("CC", str(tmp_path / "no-cc"))
    assert guard_check().line.startswith(
        f"ok    guard: guard.py, in Python (no C compiler ({tmp_path / 'no-cc'})); "
        "a C compiler would start each attempt"
    )
    monkeypatch.setenv("CC", "/bin/false")
    assert guard_check().line.startswith(
        "ok    guard: guard.py, in Python (/bin/false exited with 1"
    )
    monkeypatch.delenv("CC")
    if not components.FOUND["compiler"]():
        components.missing("compiler", "no C compiler (cc) to compile the guard")
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "with"))
    line = guard_check().line
    assert line.startswith(f"ok    guard: compiled ({tmp_path / 'with' / 'guard' / 'guard-'}")
    assert len(list((tmp_path / "with" / "guard").iterdir())) == 1


@pytest.mark.slow
def test_the_checkout_method_is_named_and_a_forced_one_that_fails_is_a_failure(
    tmp_path: Path,
) -> None:
    from bugbout.sandbox.overlay import overlay_problem

    best = "overlay" if overlay_problem(tmp_path.resolve()) is None else "copy"
    assert lines(bugbout(cwd=tmp_path))["checkouts"].startswith(f"ok    checkouts: {best}")
    copied = lines(bugbout("run.checkouts=copy", cwd=tmp_path))["checkouts"]
    assert copied == "ok    checkouts: copy (full copies, no reflinks here; run.checkouts)"
    forced = bugbout("run.checkouts=reflink", cwd=tmp_path)
    if lines(forced)["checkouts"].startswith("ok"):
        pytest.skip("this filesystem clones files: a forced reflink works")
    assert forced.returncode != 0
    assert lines(forced)["checkouts"].startswith("FAIL  checkouts: run.checkouts is reflink but")


@pytest.mark.requires("podman")
def test_podman_runs_containers_here(tmp_path: Path) -> None:
    # Every key the podman errors name can be overridden without a `+`.
    keys = (
        "environment.driver=overlay",
        "environment.suite=null",
        "environment.mirror=null",
        "environment.cache=null",
    )
    result = bugbout(
        "environment=podman",
        "environment.storage=/var/tmp/bugbout-podman-tests",
        *keys,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert lines(result)["podman"].startswith("ok    podman: "), result.stdout
    assert "runs containers" in lines(result)["podman"]


def test_podman_problems_name_the_cause_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = ProjectSettings(source="src/calc")
    chosen = BoutSettings(project=project, environment=PluginChoice(name="podman"), root=tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    missing = doctor.podman_check(chosen)
    assert not missing.ok
    assert missing.line == (
        "FAIL  podman: environment=podman: podman is not installed: apt-get install -y podman runc "
        "conmon fuse-overlayfs uidmap slirp4netns debootstrap"
    )
    unused = doctor.podman_check(BoutSettings(project=project, root=tmp_path))
    assert unused.ok
    assert unused.detail.startswith("not used (environment=podman, sandbox=podman): podman is not")
    podman = shutil.which("podman", path=os.defpath + ":/usr/sbin:/usr/bin")
    if podman is None:
        return
    (tmp_path / "podman").symlink_to(podman)  # podman without runc: crun would be used
    without_runc = doctor.podman_check(chosen)
    assert not without_runc.ok
    assert "crun refuses cgroup v1 'hybrid' hosts" in without_runc.line
    assert without_runc.line.endswith("apt-get install -y runc")


@pytest.mark.requires("podman")
def test_podman_is_checked_with_the_chosen_plugins_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without debootstrap: the podman sandbox needs no base image, and environment=podman finds
    the root filesystem in its own environment.cache."""
    from bugbout.sandbox.podman import Podman

    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("podman", "runc", "conmon"):
        found = shutil.which(tool, path=os.environ["PATH"] + ":/usr/sbin:/sbin")
        assert found is not None, tool
        (tools / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(tools))
    cache = tmp_path / "cache"
    cache.mkdir()
    storage = {"storage": "/var/tmp/bugbout-podman-tests"}
    project = ProjectSettings(source="src/calc")
    sandbox = PluginChoice.model_validate({"name": "podman", **storage})
    env = PluginChoice.model_validate({"name": "podman", **storage, "cache": str(cache)})
    if os.geteuid() != 0:  # as root debootstrap's absence is what stops the base image
        monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert not doctor.podman_check(BoutSettings(project=project, environment=env, root=tmp_path)).ok
    check = doctor.podman_check(BoutSettings(project=project, sandbox=sandbox, root=tmp_path))
    assert check.ok, check.line
    (cache / Podman(tmp_path)._rootfs_name()).write_bytes(b"")
    check = doctor.podman_check(BoutSettings(project=project, environment=env, root=tmp_path))
    assert check.ok, check.line


def test_a_wrong_project_fails_with_the_fix(tmp_path: Path) -> None:
    repo = configured_repo(tmp_path / "repo", project={"source": "src/gone", "tests": "tests"})
    result = bugbout("sandbox=none", cwd=repo)
    assert result.returncode == 1, result.stdout + result.stderr
    found = lines(result)
    assert found["project.source"] == (
        f"FAIL  project.source: src/gone is not a directory of {repo}; fix: set "
        "project.source in bugbout.yaml (`bugbout init --force` detects it)"
    )
    assert found["project.tests"].startswith("ok    project.tests")
    assert found["sandbox"] == (
        "ok    sandbox: none: agents and tests run unconfined, with the network"
    )


def test_usage_errors_stay_exit_2(tmp_path: Path) -> None:
    repo = configured_repo(tmp_path / "repo")
    result = bugbout("contestant=nobody", cwd=repo)
    assert result.returncode == 2
    assert "contestant=nobody: no such contestant" in result.stderr
    assert bugbout("--help", cwd=repo).returncode == 0
