"""The ``npm`` environment builder: a JavaScript project's ``node_modules`` at the fix's era.

The packages come from the lockfile committed at the task's parent: ``npm ci`` for
``package-lock.json`` (or ``npm-shrinkwrap.json``), pnpm for ``pnpm-lock.yaml`` and yarn
for ``yarn.lock``, each run through ``npx``: the newest release of the major version the
project's ``packageManager`` names (else the one that writes its lockfile's version).
Without a lockfile, ``npm install --before=<fix's date>`` resolves the declared ranges as
the registry had them that day; when the registry dates no version of a range before it (a
mirror dates packages by when it copied them), the newest versions in the ranges, and the
environment says so; a git-hosted devDependency that cannot be fetched is left out, and
the environment says so too. Installs run with the network and without the packages'
install scripts; tests run offline.

Each installation lives in ``BUGBOUT_HOME/npm/<key>`` (or the ``store`` option's folder),
keyed by the lockfile's text (or ``package.json`` and the date) and this machine's Node,
and is reused by every era that resolves to it. A test
run's command is that folder's ``bin/node``: a shim that links the tree's
``node_modules`` to the installation (when the tree has none) and runs this machine's
Node. Only one Node is installed: the Node release of the fix's era, when it is older, is
recorded as what could not be reproduced.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from bugbout.environments import EnvironmentFailure, EnvironmentPlugin, Options, hookimpl

if TYPE_CHECKING:
    from bugbout.environments import Command, EnvironmentRequest

LOCKFILES = (
    ("package-lock.json", "npm"),
    ("npm-shrinkwrap.json", "npm"),
    ("pnpm-lock.yaml", "pnpm"),
    ("yarn.lock", "yarn"),
)
"""Each lockfile and the client that installs from it, in the order they are looked for."""

NODE_RELEASES = (
    (10, "2018-04-24"), (12, "2019-04-23"), (14, "2020-04-21"), (16, "2021-04-20"),
    (18, "2022-04-19"), (20, "2023-04-18"), (22, "2024-04-24"), (24, "2025-05-06"),
    (26, "2026-04-22"),
)  # fmt: skip
"""Node's even (long-term) major releases and their dates: the era's Node is the last
one released before the fix."""

OLDEST_PNPM = 7
"""pnpm before 7's last releases fails on Node 20 (``ERR_INVALID_THIS``): a project that
declares an older one is installed by the newest pnpm 7, which reads its lockfile."""
DONE = ".bugbout-installed"
UNDATED = "undated"
"""The line of ``DONE`` that says the registry's newest versions were installed."""
WITHOUT = "without "
"""Opens each line of ``DONE`` that names a git-hosted devDependency left out."""
GIT_HOSTED = ("github:", "gitlab:", "bitbucket:", "git+", "git:", "git://", "http:", "https:")
SHIM = """#!/bin/sh
[ -e node_modules ] || [ ! -f package.json ] || ln -s {modules} node_modules 2>/dev/null
exec {node} "$@"
"""


class NpmOptions(Options):
    """Options of the ``npm`` environment builder."""

    before: bool = True
    """Without a lockfile, resolve the declared ranges as of the fix's date."""
    install_timeout: float = 900.0
    """Seconds one installation may take."""
    store: str | None = None
    """Where installations are kept (default ``BUGBOUT_HOME/npm``)."""


@dataclass(frozen=True)
class NpmEnvironment:
    """An installed ``node_modules`` and the Node that runs the tests."""

    path: Path
    key: str
    client: str
    node_version: str
    era_node: int | None
    date: str | None

    @property
    def modules(self) -> Path:
        """The installed packages."""
        return self.path / "node_modules"

    @property
    def description(self) -> str:
        source = f"{self.client} lockfile" if self.client else f"registry as of {self.date}"
        marker = self.path / DONE
        lines = marker.read_text().splitlines() if marker.is_file() else []
        if not self.client and self.date and UNDATED in lines:
            source = f"registry's newest (none it dates before {self.date} fits)"
        left = [line.removeprefix(WITHOUT) for line in lines if line.startswith(WITHOUT)]
        source += f", without {', '.join(left)} (git-hosted)" if left else ""
        return f"npm: Node {self.node_version}, {source}"

    @property
    def versions(self) -> dict[str, str]:
        return {"node": self.node_version}

    @property
    def python_lacks(self) -> str:
        """What stood in for the era's interpreter (the core's name for it): this machine's
        Node for the era's older one."""
        major = int(self.node_version.split(".")[0])
        if self.era_node is None or self.era_node >= major:
            return ""
        return f"Node {self.node_version} stood in for the era's Node {self.era_node}"

    def command(self, args: list[str], tree: Path, extra_paths: list[Path]) -> Command:
        """``node <args>`` in ``tree``, its ``node_modules`` the installation's; pnpm's
        hidden hoisting folder on ``NODE_PATH`` too, where a package looked up from the
        project's root (Vitest 0.29 looking for ``vite``) is found as pnpm's own
        resolution finds it."""
        from bugbout.environments import Command

        hoisted = self.modules / ".pnpm" / "node_modules"
        found = [self.modules, *([hoisted] if hoisted.is_dir() else [])]
        return Command(
            argv=[str(self.path / "bin" / "node"), *args],
            cwd=tree,
            env={"NODE_PATH": os.pathsep.join(map(str, found)), "npm_config_offline": "true"},
        )


class NpmBuilder:
    """Installs (or finds in the cache) a project's packages for a fix's era."""

    def __init__(self, options: NpmOptions | None = None) -> None:
        self.options = options or NpmOptions()

    def build(self, request: EnvironmentRequest) -> NpmEnvironment:
        """The installation for ``request``'s tree and date, made once per key."""
        from bugbout.environments import digest, locked

        node = shutil.which("node")
        if node is None:
            raise EnvironmentFailure("Node is not installed: install nodejs and npm")
        version = _node_version(node)
        manifest = request.tree / "package.json"
        if not manifest.is_file():
            raise EnvironmentFailure(
                f"{request.tree.name} has no package.json: choose an environment for its language"
            )
        lockfile, client = _lockfile(request.tree)
        day = (request.date or "")[:10] or None
        if lockfile is not None:
            key = digest("npm", client, lockfile.read_text(errors="replace"), version)
        else:
            client = ""
            key = digest("npm", manifest.read_text(errors="replace"), day or "", version)
        store = Path(self.options.store) if self.options.store else request.home / "npm"
        path = store / key
        environment = NpmEnvironment(path, key, client, version, _era_node(day), day)
        with locked(store / f"{key}.lock"):
            if not (path / DONE).exists():
                self._install(request.tree, environment, lockfile, node)
        return environment

    def _install(
        self, tree: Path, environment: NpmEnvironment, lockfile: Path | None, node: str
    ) -> None:
        path, client, day = environment.path, environment.client, environment.date
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        manifest = json.loads((tree / "package.json").read_text())
        if lockfile is None:  # without a lockfile its own packages' versions are not pinned
            manifest.pop("workspaces", None)
        (path / "package.json").write_text(json.dumps(manifest, indent=2))
        if lockfile is not None:
            shutil.copyfile(lockfile, path / lockfile.name)
        text = lockfile.read_text(errors="replace") if lockfile is not None else ""
        argv = _install_argv(client, manifest, text, day if self.options.before else None)
        done = self._run(argv, path)
        undated = done.returncode != 0 and lockfile is None and _undated(done.stderr)
        if undated:
            argv = [arg for arg in argv if not arg.startswith("--before=")]
            done = self._run(argv, path)
        unreachable = lockfile is None and done.returncode != 0 and "git" in done.stderr
        hosted = _git_hosted(manifest) if unreachable else []  # only the registry is reachable
        if hosted:
            tools = {n: spec for n, spec in manifest["devDependencies"].items() if n not in hosted}
            manifest_text = json.dumps({**manifest, "devDependencies": tools}, indent=2)
            (path / "package.json").write_text(manifest_text)
            done = self._run(argv, path)
        if done.returncode != 0 and argv[:2] == ["npm", "ci"] and "ERESOLVE" in done.stderr:
            # npm 7 on refuses a lockfile whose peer dependencies conflict; the era's installed it
            argv = [*argv, "--legacy-peer-deps"]
            done = self._run(argv, path)
        if done.returncode != 0:
            raise EnvironmentFailure(
                f"{' '.join(argv[:2])} failed: {_reason(done.stderr or done.stdout)}"
            )
        (path / "bin").mkdir()
        shim = path / "bin" / "node"
        shim.write_text(SHIM.format(modules=path / "node_modules", node=node))
        shim.chmod(0o755)
        lines = [" ".join(argv), *([UNDATED] if undated else [])]
        lines += [f"{WITHOUT}{name}" for name in hosted]
        (path / DONE).write_text("\n".join(lines))

    def _run(self, argv: list[str], path: Path) -> subprocess.CompletedProcess[str]:
        """Run the install ``argv`` in ``path``, its temporary files in a scratch folder."""
        with tempfile.TemporaryDirectory(prefix="bugbout-npm-") as scratch:
            env = {**os.environ, "npm_config_update_notifier": "false", "CI": "true"}
            env["YARN_NODE_LINKER"] = "node-modules"
            # the major version packageManager names is the one run: no switch to its
            # exact release, which pnpm 10 refuses when the registry has no signature of it
            env["npm_config_manage_package_manager_versions"] = "false"
            env["npm_config_cache"] = env.get("npm_config_cache") or str(Path.home() / ".npm")
            env["TMPDIR"] = scratch
            try:
                return subprocess.run(
                    argv,
                    cwd=path,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=self.options.install_timeout,
                    check=False,
                )
            except subprocess.TimeoutExpired as expired:
                raise EnvironmentFailure(
                    f"{' '.join(argv[:2])} timed out after {expired.timeout:g} s: "
                    "raise environment.install-timeout"
                ) from None


def _git_hosted(manifest: dict[str, object]) -> list[str]:
    """The devDependencies of ``manifest`` hosted on git (``github:owner/repo``,
    ``owner/repo``), not on the registry."""
    tools = manifest.get("devDependencies")
    if not isinstance(tools, dict):
        return []
    return [
        name
        for name, spec in tools.items()
        if str(spec).startswith(GIT_HOSTED) or re.fullmatch(r"[\w.-]+/[\w.-]+(?:#.*)?", str(spec))
    ]


def _undated(output: str) -> bool:
    """Whether an install as of a date failed because no version the registry dates before
    it meets a declared range (a registry mirror dates packages by when it copied them)."""
    return "No versions available for" in output or "with a date before" in output


def _lockfile(tree: Path) -> tuple[Path | None, str]:
    for name, client in LOCKFILES:
        if (tree / name).is_file():
            return tree / name, client
    return None, "npm"


def _install_argv(
    client: str, manifest: dict[str, object], lockfile: str, day: str | None
) -> list[str]:
    """The command that installs ``manifest``'s packages with ``client`` from ``lockfile``'s
    text (npm without a lockfile: as of ``day``)."""
    quiet = ["--ignore-scripts", "--no-audit", "--no-fund"]
    if client == "npm":
        return ["npm", "ci", *quiet]
    if not client:
        before = [f"--before={day}"] if day else []
        return ["npm", "install", "--no-package-lock", *before, *quiet]
    major = _declared_major(manifest, client)
    if client == "pnpm":
        major = max(major or _pnpm_major(lockfile), OLDEST_PNPM)
        return ["npx", "--yes", f"pnpm@{major}", "install", "--frozen-lockfile", "--ignore-scripts"]
    if major is None:
        major = 1 if "__metadata:" not in lockfile else 4
    frozen = "--frozen-lockfile" if major == 1 else "--immutable"
    return ["npx", "--yes", f"yarn@{major}", "install", frozen, "--ignore-scripts"]


def _declared_major(manifest: dict[str, object], client: str) -> int | None:
    """The major version of ``client`` that ``packageManager`` names."""
    declared = manifest.get("packageManager")
    if not isinstance(declared, str) or not declared.startswith(f"{client}@"):
        return None
    major = declared.removeprefix(f"{client}@").split(".")[0]
    return int(major) if major.isdigit() else None


def _pnpm_major(lockfile: str) -> int:
    """The pnpm that writes ``lockfile``'s version (5.x: 7, 6.x: 8, 9.x: 9)."""
    for line in lockfile.splitlines()[:5]:
        if line.startswith("lockfileVersion:"):
            version = line.split(":", 1)[1].strip().strip("'\"")
            return {"5": 7, "6": 8}.get(version.split(".")[0], 9)
    return 9


def _node_version(node: str) -> str:
    done = subprocess.run([node, "--version"], capture_output=True, text=True, check=False)
    return done.stdout.strip().removeprefix("v") or "unknown"


def _era_node(day: str | None) -> int | None:
    """The last long-term Node released before ``day`` (``None``: no date, or before 10)."""
    if day is None:
        return None
    when = date.fromisoformat(day)
    released = [major for major, on in NODE_RELEASES if date.fromisoformat(on) <= when]
    return released[-1] if released else None


def _reason(output: str) -> str:
    """The first line of an install's errors that says what went wrong (not its code, nor
    where its log is)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in lines:
        for prefix in ("npm error", "npm ERR!", "ERR_PNPM", "error"):
            if line.startswith(prefix):
                said = line.removeprefix(prefix).strip()
                if said and not said.startswith(("code ", "A complete log")):
                    return said[:300]
    return (lines[-1] if lines else "no output")[:300]


@hookimpl
def bugbout_environments() -> Iterator[EnvironmentPlugin]:
    yield EnvironmentPlugin(
        name="npm",
        factory=NpmBuilder,
        options=NpmOptions,
        description="a JavaScript project's node_modules from its lockfile, or as of the fix",
    )
