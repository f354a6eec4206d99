"""The ``uv`` environment builder (the default): one virtual environment per resolution.

An era is a Python version and the project's dependencies as they were at a fix: uv
resolves them with ``--exclude-newer`` set to the first day of the month after the fix
(:mod:`bugbout.core.plumbing.environments.uv_resolution`). An environment is keyed by what they
resolve to (the interpreter's version and the pinned set), so eras that resolve alike
share one; environments are cached in ``BUGBOUT_HOME/envs/<key>``, resolutions in
``BUGBOUT_HOME/resolutions``. The project itself is never installed; its runs find the
dist-info that installing it would have written (:mod:`bugbout.core.plumbing.project.dist_info`).

Besides ``project.test-dependencies`` and the runtime dependencies, the test dependencies
the project declared at the fix are installed (``test-extras``): those that do not resolve
are left out, and the description names them. An environment whose pytest does not start
is not used: building it fails with the cause.

A resolution that the date held back further than it should is repaired by exempting the
blocking dependency from the date (:mod:`bugbout.core.plumbing.environments.backtrack`); the
description says so.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from bugbout.environments import (
    EnvironmentFailure,
    EnvironmentPlugin,
    UvFailure,
    UvOptions,
    describe,
    hookimpl,
    locked,
    run_uv,
    unconverted,
    uv_binary,
    uv_error,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from bugbout.environments import (
        Command,
        EnvironmentRequest,
        EraCheck,
        EraInterpreter,
        Exemption,
        ManagedPythons,
        Resolution,
    )

DISTS = "dists"
"""The folder of an environment that holds the projects' dist-infos."""
MARKER = "bugbout-env.json"
"""Written last into a built environment: its presence means the build completed."""
VENV_TIMEOUT = 120.0
LAYOUT = "5"
"""What every environment carries besides its requirements; a new value rebuilds them
(5: no distribution left as the Python 2 code today's build tools make of a ``use_2to3``
source)."""
RESOLVER = "4"
"""How an era is resolved (2: distributions no file of their era installs are exempt; 3:
test dependencies left out are tried again with the era check's exemptions; 4: a build
tool needed at run time is held to its era's release); a new value
resolves every era again, and keeps the environments whose pinned set is the same."""
AGAIN = ("reinstall", "refresh")
"""uv's options that build a distribution anew (not from its cache) and replace it."""
COMPILED_FROM = (3, 7)
"""uv compiles bytecode with a script of its own that needs Python 3.7 or later: older
environments compile as their modules are imported."""


@dataclass(frozen=True)
class UvEnvironment:
    """A virtual environment built by uv."""

    path: Path
    python_version: str
    exclude_newer: str | None
    key: str
    import_roots: tuple[str, ...]
    left_out: dict[str, str] = field(default_factory=dict, hash=False)
    """Declared test dependencies it lacks, each with why (they did not resolve or build)."""
    era: EraCheck | None = field(default=None, hash=False)
    """The resolved versions that matter, and what the era check exempted."""
    note: str = ""
    """What the description says of the runner and of the era check."""
    stands_in: str = ""
    """The era's Python version its interpreter stands in for (``""``: it is the era's)."""
    python_lacks: str = ""
    """What its tests lack then (see
    :func:`~bugbout.core.plumbing.environments.interpreters.stand_in`)."""
    metadata: Path | None = field(default=None, hash=False)
    """The folder of the project's dist-info for the tree it was built for
    (:mod:`~bugbout.core.plumbing.project.dist_info`): on ``PYTHONPATH`` after the tree."""

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    @property
    def versions(self) -> dict[str, str]:
        return dict(self.era.versions) if self.era else {}

    @property
    def exempt(self) -> list[Exemption]:
        return list(self.era.exempt) if self.era else []

    @property
    def description(self) -> str:
        instead = f" (for {self.stands_in}, not installed)" if self.stands_in else ""
        return describe(
            f"uv: Python {self.python_version}{instead}",
            self.exclude_newer,
            self.left_out,
            self.note,
        )

    def command(self, args: list[str], tree: Path, extra_paths: list[Path]) -> Command:
        """``<env>/bin/python -m pytest <args>`` in ``tree``, with the tree importable."""
        from bugbout.environments import Command, python_path

        return Command(
            argv=[str(self.python), "-m", "pytest", *args],
            cwd=tree,
            env={
                "PYTHONPATH": python_path(tree, self.import_roots, extra_paths, self.metadata),
                "VIRTUAL_ENV": str(self.path),
                "PATH": f"{self.path / 'bin'}{os.pathsep}{os.defpath}",
            },
        )


class UvBuilder:
    """Resolves a fix's era and builds (or finds in the cache) the environment of what it
    resolves to."""

    revision = f"layout {LAYOUT}, resolver {RESOLVER}"
    """How it resolves and builds
    (:func:`bugbout.core.plumbing.environments.environment.revision`)."""

    def __init__(self, options: UvOptions | None = None) -> None:
        self.options = options or UvOptions()
        self._built: dict[str, UvEnvironment] = {}
        self._pythons: dict[Path, ManagedPythons] = {}

    def build(self, request: EnvironmentRequest) -> UvEnvironment:
        """The environment for ``request``'s era, resolved once per era and built once per
        resolution, its runs finding the dist-info of the project in ``request.tree``. Its
        failure on a Python that stands in for the era's says so."""
        from bugbout.environments import declared_classifiers, declared_python, metadata_folder

        chosen = self.pythons(request.home).interpreter(
            declared_python(request.tree),
            request.date,
            request.project.python,
            tuple(declared_classifiers(request.tree)),
        )
        try:
            environment = self._build(request, chosen)
        except EnvironmentFailure as failure:
            if not chosen.lacks:
                raise
            raise EnvironmentFailure(f"{failure}; {chosen.lacks}") from None
        installed = _recorded(environment.path).get("installed")
        metadata = metadata_folder(
            request.tree,
            environment.path / DISTS,
            request.project.source,
            installed if isinstance(installed, list) else [],
        )
        return replace(environment, metadata=metadata)

    def _build(self, request: EnvironmentRequest, chosen: EraInterpreter) -> UvEnvironment:
        from bugbout.environments import (
            EraCheck,
            EraResolution,
            declared_dependencies,
            declared_test_dependencies,
            digest,
            exclude_newer_date,
            helpers_of,
            interpreter_version,
        )

        dependencies = [d for d in declared_dependencies(request.tree) if not d.startswith("-")]
        interpreter = chosen.path
        version = interpreter_version(interpreter)
        exclude_newer = (
            exclude_newer_date(request.date)
            if self.options.exclude_newer and request.date
            else None
        )
        test_dependencies = list(request.project.test_dependencies)
        declared_tests = (
            declared_test_dependencies(request.tree) if self.options.test_extras else []
        )
        era = digest(
            "uv-era",
            version,
            json.dumps(sorted(dependencies)),
            json.dumps(sorted(test_dependencies)),
            json.dumps(sorted(declared_tests)),
            exclude_newer or "",
            self.options.index_url or "",
            LAYOUT,
            RESOLVER,
        )
        if era in self._built:
            return self._built[era]
        era_resolution = EraResolution(
            request.home,
            era,
            interpreter,
            version,
            exclude_newer,
            required=list(dict.fromkeys([*test_dependencies, *dependencies])),
            declared=declared_tests,
            index_url=self.options.index_url,
            timeout=self.options.install_timeout,
        )
        resolution, tools = era_resolution.resolved()
        helpers = helpers_of(resolution.pinned)  # built without them before: another key
        key = digest(
            "uv",
            version,
            json.dumps(tools),
            json.dumps(resolution.pinned),
            "era-build-tools" if resolution.era_build_tools else "",
            self.options.index_url or "",
            LAYOUT,
            *([f"built with {' '.join(helpers)}"] if helpers else []),
        )
        environment = UvEnvironment(
            path=request.home / "envs" / key,
            python_version=version,
            exclude_newer=exclude_newer,
            key=key,
            import_roots=request.project.import_roots,
            stands_in=chosen.era,
            python_lacks=chosen.lacks,
        )
        if not _complete(environment.path):
            _Build(self.options, environment, interpreter, resolution, tools).run()
        recorded = _recorded(environment.path)
        if isinstance(recorded.get("error"), str):
            raise EnvironmentFailure(str(recorded["error"]))
        unbuilt = recorded.get("unbuilt")
        environment = replace(
            environment,
            left_out={**resolution.left_out, **(unbuilt if isinstance(unbuilt, dict) else {})},
            era=resolution.era or EraCheck.recorded(recorded.get("era")),
            note=resolution.note,
        )
        if not resolution.short:  # a short resolution is tried again by the next build
            self._built[era] = environment
        return environment

    def pythons(self, home: Path) -> ManagedPythons:
        """The Pythons uv provides under ``home`` for eras this machine lacks."""
        from bugbout.environments import ManagedPythons, pythons_directory

        if home not in self._pythons:
            self._pythons[home] = ManagedPythons(
                uv_binary(), pythons_directory(home), uv_error, self.options.python_downloads
            )
        return self._pythons[home]


def _complete(path: Path) -> bool:
    return (path / MARKER).is_file() and (path / "bin" / "python").exists()


def _recorded(path: Path) -> dict[str, object]:
    try:
        recorded = json.loads((path / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return recorded if isinstance(recorded, dict) else {}


@dataclass
class _Build:
    """One environment build: in a temporary directory, then renamed into place."""

    options: UvOptions
    environment: UvEnvironment
    interpreter: Path
    resolution: Resolution
    tools: list[str]
    """The era's build tools, pinned: installed first."""
    unbuilt: dict[str, str] = field(default_factory=dict)
    """Distributions no build tools could build, each with why."""

    def run(self) -> None:
        import shutil
        import tempfile

        final = self.environment.path
        final.parent.mkdir(parents=True, exist_ok=True)
        with locked(final.parent / f"{final.name}.lock"):
            if _complete(final):  # another process built it while we waited
                return
            for stale in [final, *final.parent.glob(f".{final.name}-*")]:
                if stale.exists():  # left by a build that was killed
                    shutil.rmtree(stale, ignore_errors=True)
            scratch = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=final.parent))
            try:
                venv = scratch / "env"
                self._create(venv)
                self._install_pinned(venv)
                error = self._runner_error(venv)
                self._describe(venv, self._freeze(venv), error)
                venv.rename(final)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)

    def _create(self, venv: Path) -> None:
        from bugbout.environments import era_tools_date

        self._uv(
            ["venv", "--no-project", "--relocatable", "--python", str(self.interpreter), str(venv)],
            timeout=VENV_TIMEOUT,
            what=f"creating a Python {self.environment.python_version} environment",
        )
        if self.tools:  # the era's, first: the pinned set may hold newer releases of them
            era = era_tools_date(self.environment.exclude_newer, self.environment.python_version)
            self._install(venv, self.tools, era_build_tools=True, exclude_newer=era)

    def _install_pinned(self, venv: Path) -> None:
        """Install the pinned set; a distribution today's build tools cannot build, or
        build into Python 2 code (they skip ``use_2to3``:
        :mod:`~bugbout.core.plumbing.environments.unconverted`), is installed apart, built with its
        era's, and left out when even those cannot build it."""
        from bugbout.environments import build_failure, raised, timed_out

        remaining = list(self.resolution.pinned)
        apart: list[str] = []
        while True:
            try:
                self._install(venv, remaining, era_build_tools=self.resolution.era_build_tools)
                break
            except UvFailure as failure:
                pin = _pin_of(build_failure(failure), remaining)
                if pin is None or self.resolution.era_build_tools:
                    raise raised(failure) from None
                remaining.remove(pin)
                apart.append(pin)
        if not self.resolution.era_build_tools:  # today's tools skip use_2to3
            apart += unconverted(venv / "bin" / "python", remaining)
        for pin in apart:
            try:
                self._install(venv, [pin], era_build_tools=True, again=pin in remaining)
            except UvFailure as failure:
                if timed_out(failure):
                    raise raised(failure) from None
                if pin in remaining:  # installed, as today's tools built it
                    self.unbuilt[pin] = f"holds Python 2 code: {failure.reason}"
                else:
                    self.unbuilt[pin] = f"cannot be built: {failure.reason}"

    def _install(
        self,
        venv: Path,
        pins: list[str],
        *,
        era_build_tools: bool,
        exclude_newer: str | None = None,
        again: bool = False,
    ) -> None:
        """Install ``pins`` as they are (their dependencies are among the pins), capped at
        ``exclude_newer`` (default: the environment's era); ``again``: built anew and
        installed in place of what is there."""
        from bugbout.environments import UvCall, build_helpers

        if not pins:
            return
        call = UvCall(
            exclude_newer or self.environment.exclude_newer,
            self.options.index_url,
            self.options.install_timeout,
            self.environment.path.parent,
            self.resolution.exempt,
        )
        call.run(
            [
                "pip",
                "install",
                "--python",
                str(venv / "bin" / "python"),
                *(["--compile-bytecode"] if self._compiled() else []),
                "--no-deps",
                *call.options(era_build_tools=era_build_tools),
                *[f"--{o}-package={p.split('==')[0]}" for p in pins if again for o in AGAIN],
                *build_helpers(pins, self.resolution.pinned, venv.parent),
                *pins,
            ],
            what="installing the test and runtime dependencies",
        )

    def _compiled(self) -> bool:
        version = self.environment.python_version.split(".")[:2]
        return tuple(int(part) for part in version) >= COMPILED_FROM

    def _runner_error(self, venv: Path) -> str | None:
        """Why the environment's pytest does not start, if it does not (it has one)."""
        import subprocess

        pytest = [p for p in self.resolution.pinned if p.lower().startswith("pytest==")]
        if not pytest:
            return None
        try:
            result = subprocess.run(
                [str(venv / "bin" / "python"), "-m", "pytest", "--version"],
                capture_output=True,
                text=True,
                timeout=VENV_TIMEOUT,
                check=False,
                cwd=venv,
                env={"PATH": os.defpath, "HOME": str(venv)},
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{pytest[0]} does not start in its environment: {exc}"
        if result.returncode == 0:
            return None
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        held = {p.split("==")[0].lower(): p for p in [*self.tools, *self.resolution.build_tools]}
        return (
            f"{pytest[0]} does not start on Python {self.environment.python_version} "
            f"with the build tools it holds ({', '.join(held.values()) or 'none'}): {last}; set "
            "project.python to a Python of the era or project.test-dependencies to a pytest "
            "that runs on it"
        )

    def _freeze(self, venv: Path) -> list[str]:
        frozen = self._uv(
            ["pip", "freeze", "--python", str(venv / "bin" / "python")],
            timeout=VENV_TIMEOUT,
            what="listing the installed packages",
        )
        return [line for line in frozen.splitlines() if line.strip()]

    def _describe(self, venv: Path, installed: list[str], error: str | None) -> None:
        from datetime import UTC, datetime

        resolution = self.resolution
        left_out = {**resolution.left_out, **self.unbuilt}
        description = {
            "description": replace(
                self.environment, left_out=left_out, era=resolution.era, note=resolution.note
            ).description,
            "key": self.environment.key,
            "python": self.environment.python_version,
            "interpreter": str(self.interpreter),
            "exclude-newer": self.environment.exclude_newer,
            "index-url": self.options.index_url,
            "requirements": resolution.requirements,
            "left-out": resolution.left_out,
            "unbuilt": self.unbuilt,
            "pinned": resolution.pinned,
            "era-tools": self.tools,
            "era-build-tools": resolution.era_build_tools,
            "installed": installed,
            "era": resolution.era.model_dump(mode="json") if resolution.era else None,
            "error": error,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        (venv / MARKER).write_text(json.dumps(description, indent=2) + "\n", encoding="utf-8")

    def _uv(self, args: list[str], *, timeout: float, what: str) -> str:
        return run_uv(args, timeout=timeout, what=what, cwd=self.environment.path.parent)


def _pin_of(name: str | None, pins: list[str]) -> str | None:
    """The pin of distribution ``name`` among ``pins``."""
    from packaging.utils import canonicalize_name

    if name is None:
        return None
    wanted = canonicalize_name(name)
    return next((p for p in pins if canonicalize_name(p.split("==")[0]) == wanted), None)


@hookimpl
def bugbout_environments() -> Iterator[EnvironmentPlugin]:
    yield EnvironmentPlugin(
        name="uv",
        factory=UvBuilder,
        options=UvOptions,
        description="a uv virtual environment per Python version and resolved dependencies "
        "(default)",
    )
