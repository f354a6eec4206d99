"""The ``npm`` environment, for real against the npm registry: installs from a committed
lockfile, or as of the fix's date without one; reused per key; a failed install says why
in one line; the era's Node that this machine's stood in for is recorded."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from bugbout.core.contract.errors import EnvironmentFailure
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import EnvironmentRequest, lacking
from bugbout.plugins.environments.npm import NpmBuilder, NpmEnvironment, NpmOptions

pytestmark = [pytest.mark.slow, pytest.mark.requires("js-runners")]


def _tree(root: Path, dependencies: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    manifest = {"name": "tiny", "private": True, "dependencies": dependencies}
    (root / "package.json").write_text(json.dumps(manifest))
    return root


def _build(tree: Path, home: Path, date: str | None = None) -> object:
    request = EnvironmentRequest(
        project=ProjectSettings(source="src", tests="test"), tree=tree, home=home, date=date
    )
    return NpmBuilder(NpmOptions()).build(request)


def _version(environment: object, package: str) -> str:
    modules: Path = environment.modules  # type: ignore[attr-defined]
    return str(json.loads((modules / package / "package.json").read_text())["version"])


def test_the_committed_lockfile_is_installed_and_reused(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "tree", {"is-number": ">=3 <7"})
    subprocess.run(
        ["npm", "install", "--package-lock-only", "--no-audit", "--no-fund", "is-number@4.0.0"],
        cwd=tree,
        check=True,
        capture_output=True,
    )
    first = _build(tree, tmp_path / "home")
    assert _version(first, "is-number") == "4.0.0"
    assert "npm lockfile" in first.description  # type: ignore[attr-defined]
    marker = first.path / ".bugbout-installed"  # type: ignore[attr-defined]
    installed = marker.stat().st_mtime_ns
    again = _build(tree, tmp_path / "home", date="2020-01-01")
    assert again.path == first.path  # type: ignore[attr-defined]
    assert marker.stat().st_mtime_ns == installed


def test_without_a_lockfile_the_registry_is_read_as_of_the_fix(tmp_path: Path) -> None:
    """The registry dates is-number 4.0.0 on 2024-11-22 and 6.0.0 on 2024-12-02."""
    tree = _tree(tmp_path / "tree", {"is-number": ">=3 <7"})
    then = _build(tree, tmp_path / "home", date="2024-11-23T10:00:00+00:00")
    assert _version(then, "is-number") == "4.0.0"
    assert "registry as of 2024-11-23" in then.description  # type: ignore[attr-defined]
    now = _build(tree, tmp_path / "home")
    assert _version(now, "is-number") == "6.0.0"


def test_a_range_the_registry_dates_no_version_of_before_the_fix_takes_its_newest(
    tmp_path: Path,
) -> None:
    """A mirror dates packages by when it copied them: is-number 5.0.0 on 2024-12-09, long
    after it was released; a 2024-11-23 fix that declares ``^5`` installs it, and says so."""
    tree = _tree(tmp_path / "tree", {"is-number": "^5.0.0"})
    then = _build(tree, tmp_path / "home", date="2024-11-23T10:00:00+00:00")
    assert _version(then, "is-number") == "5.0.0"
    assert then.description.endswith(  # type: ignore[attr-defined]
        "registry's newest (none it dates before 2024-11-23 fits)"
    )


def test_a_failed_install_says_why_in_one_line(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "tree", {"bugbout-no-such-package-3f9a1c": "1.0.0"})
    with pytest.raises(EnvironmentFailure) as failure:
        _build(tree, tmp_path / "home")
    message = str(failure.value)
    assert "\n" not in message
    assert message.startswith("npm install failed: ")
    assert "404" in message


def test_the_era_s_node_that_could_not_be_used_is_recorded(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "tree", {})
    environment = _build(tree, tmp_path / "home", date="2019-06-01")
    assert "stood in for the era's Node 12" in lacking(environment)  # type: ignore[arg-type]
    recent = _build(tree, tmp_path / "home", date="2026-01-01")
    assert lacking(recent) == ""  # type: ignore[arg-type]


INTEGRITY = (
    "sha512-41Cifkg6e8TylSpdtTpeLVMqvSBEVzTttHvERD741+pnZ8ANv0004MRL43QKPDlK9cGvNp6NZWZUBl"
    "bGXYxxng=="
)
PNPM_5_3 = f"""lockfileVersion: 5.3

specifiers:
  is-number: 7.0.0

dependencies:
  is-number: 7.0.0

packages:

  /is-number/7.0.0:
    resolution: {{integrity: {INTEGRITY}}}
    engines: {{node: '>=0.12.0'}}
    dev: false
"""


def test_a_pnpm_too_old_for_this_node_is_replaced_by_one_that_reads_its_lockfile(
    tmp_path: Path,
) -> None:
    """ufo declared pnpm 6.32.3 and 7.27, which fail on Node 20 (``ERR_INVALID_THIS``)."""
    tree = _tree(tmp_path / "tree", {"is-number": "7.0.0"})
    manifest = json.loads((tree / "package.json").read_text())
    manifest["packageManager"] = "pnpm@6.32.3"
    (tree / "package.json").write_text(json.dumps(manifest))
    (tree / "pnpm-lock.yaml").write_text(PNPM_5_3)
    environment = _build(tree, tmp_path / "home")
    assert _version(environment, "is-number") == "7.0.0"
    assert "pnpm lockfile" in environment.description  # type: ignore[attr-defined]


def test_pnpm_runs_as_the_major_version_package_manager_names(tmp_path: Path) -> None:
    """pnpm 10 switches to the exact release ``packageManager`` names, and refuses one
    the registry holds no signature of (mlly's tasks of 2025, on this machine's mirror):
    the newest release of that major version installs instead."""
    tree = _tree(tmp_path / "tree", {})
    manifest = json.loads((tree / "package.json").read_text())
    (tree / "package.json").write_text(json.dumps({**manifest, "packageManager": "pnpm@10.15.0"}))
    (tree / "pnpm-lock.yaml").write_text(
        "lockfileVersion: '9.0'\n\nsettings:\n  autoInstallPeers: true\n"
        "  excludeLinksFromLockfile: false\n\nimporters:\n\n  .: {}\n"
    )
    environment = _build(tree, tmp_path / "home")
    assert "pnpm lockfile" in environment.description  # type: ignore[attr-defined]


def test_pnpm_s_hidden_hoisting_folder_is_on_node_path(tmp_path: Path) -> None:
    """Vitest 0.29 looks for ``vite`` from the project's root, which a pnpm install keeps
    in ``node_modules/.pnpm/node_modules`` (ufo's tasks of 2023: "MISSING DEP vite")."""
    environment = NpmEnvironment(tmp_path, "key", "pnpm", "20.20.2", None, None)
    (tmp_path / "node_modules" / ".pnpm" / "node_modules").mkdir(parents=True)
    paths = environment.command([], tmp_path, []).env["NODE_PATH"].split(os.pathsep)
    assert paths == [
        str(tmp_path / "node_modules"),
        str(tmp_path / "node_modules/.pnpm/node_modules"),
    ]


def test_a_lockfile_whose_peer_dependencies_conflict_is_installed_as_its_era_did(
    tmp_path: Path,
) -> None:
    """uuid's lockfile of 2022 pins eslint 8 beside a config that wants eslint 7 as a
    peer: today's ``npm ci`` refuses it (ERESOLVE); the era's npm installed it."""
    tree = _tree(tmp_path / "tree", {})
    pinned = ["react@17.0.2", "react-dom@18.2.0"]
    subprocess.run(
        ["npm", "install", "--package-lock-only", "--legacy-peer-deps", "--no-audit", *pinned],
        cwd=tree,
        check=True,
        capture_output=True,
    )
    environment = _build(tree, tmp_path / "home")
    assert _version(environment, "react") == "17.0.2"
    assert _version(environment, "react-dom") == "18.2.0"


def test_a_git_hosted_tool_that_cannot_be_fetched_is_left_out_and_said(tmp_path: Path) -> None:
    """picomatch's devDependencies of 2024-25 name ``github:jonschlinkert/time-require``;
    only the registry is reachable here, so it is left out, and the environment says so."""
    tree = tmp_path / "tree"
    tree.mkdir()
    tools = {"is-number": "7.0.0", "time-require": "github:jonschlinkert/time-require"}
    manifest = {"name": "tiny", "private": True, "devDependencies": tools}
    (tree / "package.json").write_text(json.dumps(manifest))
    environment = _build(tree, tmp_path / "home", date="2025-07-15")
    assert _version(environment, "is-number") == "7.0.0"
    assert environment.description.endswith(", without time-require (git-hosted)")  # type: ignore[attr-defined]
