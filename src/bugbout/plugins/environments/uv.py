"""The ``uv`` environment builder (the default): one virtual environment per project era.

An era is a Python version and the project's dependencies as they were at a fix: uv
resolves them with ``--exclude-newer`` set to the first day of the month after the fix,
so fixes of one month share an environment. Environments are cached in
``BUGBOUT_HOME/envs/<key>``; the project itself is never installed.

Besides ``project.test-dependencies`` and the runtime dependencies, the test dependencies
the project declared at the fix are installed (``test-extras``). They are a best effort:
when they do not resolve, the environment is built without them, and its description says
so.

A resolution that the date held back further than it should is repaired by exempting the
blocking dependency from the date (:mod:`bugbout.core.plumbing.backtrack`); the description says so.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from bugbout import EnvironmentPlugin, hookimpl
from bugbout.core.contract.types import Options
from bugbout.core.plumbing.managed_pythons import ManagedPythons, PythonDownloads, pythons_directory
from bugbout.plugins.environments.uv_program import (
    UvFailure,
    run_uv,
    supports_exclude_newer_package,
    uv_binary,
    uv_error,
)
from bugbout.sandbox.locking import locked

if TYPE_CHECKING:
    from collections.abc import Iterator

    from bugbout.core.plumbing.backtrack import EraCheck
    from bugbout.core.plumbing.environment import Command, EnvironmentRequest
    from bugbout.core.store.records import Exemption

MARKER = "bugbout-env.json"
"""Written last into a built environment: its presence means the build completed."""
VENV_TIMEOUT = 120.0
INSTALL_TIMEOUT = 600.0
BUILD_TOOLS = (
    "setuptools",
    "setuptools-scm",
    "wheel",
    "hatchling",
    "hatch-vcs",
    "flit-core",
    "poetry-core",
    "pdm-backend",
    "cython",
)
"""Build backends and their helpers: sdists get their newest releases when built."""
SETUPTOOLS_BEFORE = (3, 12)
"""Environments of Pythons older than this carry setuptools, as their venvs did."""
LAYOUT = "3"
"""What every environment carries besides its requirements; a new value rebuilds them."""


class UvOptions(Options):
    """Options of the ``uv`` environment builder."""

    exclude_newer: bool = True
    """Resolve dependencies as of the fix's date; off: the newest releases."""
    index_url: str | None = None
    """A package index to use instead of PyPI."""
    test_extras: bool = True
    """Also install the test dependencies the project declared at the fix."""
    python_downloads: PythonDownloads = "automatic"
    """Whether uv may download the era's Python when this machine lacks it."""


def describe(
    interpreter: str, exclude_newer: str | None, test_extras_error: str | None, era_note: str = ""
) -> str:
    """An environment's one-line description: its interpreter, its dependencies' era (and
    what the era check repaired), and whether the declared test extras are missing."""
    era = f"deps as of {exclude_newer}" if exclude_newer else "latest deps"
    if era_note:
        era += f"; {era_note}"
    description = f"{interpreter}, {era}"
    if test_extras_error is not None:
        description += f", without declared test extras (they did not resolve: {test_extras_error})"
    return description


@dataclass(frozen=True)
class UvEnvironment:
    """A virtual environment built by uv."""

    path: Path
    python_version: str
    exclude_newer: str | None
    key: str
    import_roots: tuple[str, ...]
    test_extras_error: str | None = None
    """Why the declared test dependencies were left out, when they did not resolve."""
    era: EraCheck | None = field(default=None, hash=False)
    """The resolved versions that matter, and what the era check exempted."""

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
        return describe(
            f"uv: Python {self.python_version}",
            self.exclude_newer,
            self.test_extras_error,
            self.era.note if self.era else "",
        )

    def command(self, args: list[str], tree: Path, extra_paths: list[Path]) -> Command:
        """``<env>/bin/python -m pytest <args>`` in ``tree``, with the tree importable."""
        from bugbout.core.plumbing.environment import Command
        from bugbout.core.plumbing.interpreters import python_path

        return Command(
            argv=[str(self.python), "-m", "pytest", *args],
            cwd=tree,
            env={
                "PYTHONPATH": python_path(tree, self.import_roots, extra_paths),
                "VIRTUAL_ENV": str(self.path),
                "PATH": f"{self.path / 'bin'}{os.pathsep}{os.defpath}",
            },
        )


def exclude_newer_date(fix_date: str) -> str:
    """The first day of the month after ``fix_date`` (ISO 8601), e.g. ``2021-07-01``."""
    year, month = int(fix_date[:4]), int(fix_date[5:7])
    year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return f"{year:04d}-{month:02d}-01"


class UvBuilder:
    """Builds (or finds in the cache) the uv environment of a fix's era."""

    def __init__(self, options: UvOptions | None = None) -> None:
        self.options = options or UvOptions()
        self._built: dict[str, UvEnvironment] = {}
        self._pythons: dict[Path, ManagedPythons] = {}

    def build(self, request: EnvironmentRequest) -> UvEnvironment:
        """The environment for ``request``'s era, built once per key."""
        import json

        from bugbout.core.plumbing import interpreters
        from bugbout.core.plumbing import project_metadata as meta
        from bugbout.core.plumbing.backtrack import EraCheck
        from bugbout.core.store.records import digest

        dependencies = [
            d for d in meta.declared_dependencies(request.tree) if not d.startswith("-")
        ]
        interpreter = self.pythons(request.home).interpreter(
            meta.declared_python(request.tree), request.date, request.project.python
        )
        version = interpreters.interpreter_version(interpreter)
        exclude_newer = (
            exclude_newer_date(request.date)
            if self.options.exclude_newer and request.date
            else None
        )
        test_dependencies = list(request.project.test_dependencies)
        declared_tests = (
            meta.declared_test_dependencies(request.tree) if self.options.test_extras else []
        )
        parts = [
            "uv",
            version,
            json.dumps(sorted(dependencies)),
            json.dumps(sorted(test_dependencies)),
            exclude_newer or "",
            self.options.index_url or "",
            LAYOUT,
        ]
        if declared_tests:  # without any, the key is what it was before test extras existed
            parts.append(json.dumps(sorted(declared_tests)))
        key = digest(*parts)
        if key in self._built:
            return self._built[key]
        environment = UvEnvironment(
            path=request.home / "envs" / key,
            python_version=version,
            exclude_newer=exclude_newer,
            key=key,
            import_roots=request.project.import_roots,
        )
        if not _complete(environment.path):
            _Build(
                self.options,
                environment,
                interpreter,
                test_dependencies,
                dependencies,
                declared_tests,
            ).run()
        # The build may have fallen back (here or in another process): the marker says.
        environment = replace(
            environment,
            test_extras_error=_test_extras_error(environment.path),
            era=EraCheck.recorded(_recorded(environment.path).get("era")),
        )
        self._built[key] = environment
        return environment

    def pythons(self, home: Path) -> ManagedPythons:
        """The Pythons uv provides under ``home`` for eras this machine lacks."""
        if home not in self._pythons:
            self._pythons[home] = ManagedPythons(
                uv_binary(), pythons_directory(home), uv_error, self.options.python_downloads
            )
        return self._pythons[home]


def _complete(path: Path) -> bool:
    return (path / MARKER).is_file() and (path / "bin" / "python").exists()


def _recorded(path: Path) -> dict[str, object]:
    import json

    try:
        recorded = json.loads((path / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return recorded if isinstance(recorded, dict) else {}


def _test_extras_error(path: Path) -> str | None:
    """Why a built environment went without its declared test dependencies, if it did."""
    error = _recorded(path).get("test-extras-error")
    return error if isinstance(error, str) else None


@dataclass
class _Build:
    """One environment build: in a temporary directory, then renamed into place."""

    options: UvOptions
    environment: UvEnvironment
    interpreter: Path
    test_dependencies: list[str]
    dependencies: list[str]
    declared_tests: list[str]
    exempt: list[Exemption] = field(default_factory=list)
    """Dependencies resolved without the date cap (the era check's repair)."""
    outcome: tuple[list[str], str | None] = field(init=False, default=([], None))
    """What was installed, and why the declared test dependencies were left out."""

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
                self.outcome = self._install_all(venv)
                installed = self._freeze(venv)
                era = self._check_era(venv, installed)
                if era is not None and era.exempt:
                    installed = self._freeze(venv)
                self._describe(venv, installed, era)
                venv.rename(final)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)

    def _create(self, venv: Path) -> None:
        self._uv(
            ["venv", "--no-project", "--relocatable", "--python", str(self.interpreter), str(venv)],
            timeout=VENV_TIMEOUT,
            what=f"creating a Python {self.environment.python_version} environment",
        )
        era = self._era_tools()
        if era:  # resolved as of the fix, first: the build tools' exemption must not touch them
            self._install(venv, era, exempt_build_tools=False)

    def _check_era(self, venv: Path, installed: list[str]) -> EraCheck | None:
        """Check the resolution against the index's dates; repair it in ``venv``."""
        from bugbout.core.plumbing.backtrack import check_era
        from bugbout.core.plumbing.package_index import PackageIndex

        if not self.environment.exclude_newer:
            return None
        return check_era(
            PackageIndex(self.options.index_url),
            installed,
            functools.partial(self._rebuild, venv) if supports_exclude_newer_package() else None,
            direct=[*self.test_dependencies, *self.dependencies, *self.declared_tests],
            python=self.environment.python_version,
            date=self.environment.exclude_newer,
        )

    def _rebuild(self, venv: Path, exempt: list[Exemption]) -> list[str]:
        """Build ``venv`` again, fresh, with ``exempt`` free of the date; what it holds."""
        import shutil

        self.exempt = exempt
        shutil.rmtree(venv, ignore_errors=True)
        self._create(venv)
        self.outcome = self._install_all(venv)
        return self._freeze(venv)

    def _install_all(self, venv: Path) -> tuple[list[str], str | None]:
        """Install everything; if that fails because of the declared test dependencies, all
        but them, in a fresh environment. What was installed, and why they were left out."""
        import shutil

        required = list(dict.fromkeys([*self.test_dependencies, *self.dependencies]))
        declared = [d for d in dict.fromkeys(self.declared_tests) if d not in required]
        if not declared:  # nothing declared that is not installed anyway
            self._install(venv, required)
            return required, None
        requirements = [*declared, *required]
        try:
            self._install(venv, requirements)
        except UvFailure as failure:
            shutil.rmtree(venv, ignore_errors=True)
            self._create(venv)
            self._install(venv, required)
            return required, failure.reason
        return requirements, None

    def _era_tools(self) -> list[str]:
        """What the era's Python carried in its environments: setuptools before 3.12."""
        version = tuple(int(part) for part in self.environment.python_version.split(".")[:2])
        return ["setuptools"] if version < SETUPTOOLS_BEFORE else []

    def _install(
        self, venv: Path, requirements: list[str], *, exempt_build_tools: bool = True
    ) -> None:
        python = str(venv / "bin" / "python")
        options = ["--compile-bytecode"]
        if self.environment.exclude_newer:
            options += ["--exclude-newer", self.environment.exclude_newer]
            if exempt_build_tools and supports_exclude_newer_package():
                tomorrow = (date.today() + timedelta(days=1)).isoformat()
                for tool in BUILD_TOOLS:
                    options += ["--exclude-newer-package", f"{tool}={tomorrow}"]
                for exemption in self.exempt:
                    options += ["--exclude-newer-package", f"{exemption.name}={exemption.until}"]
        if self.options.index_url:
            options += ["--index-url", self.options.index_url]
        if requirements:
            self._uv(
                ["pip", "install", "--python", python, *options, *requirements],
                timeout=INSTALL_TIMEOUT,
                what="installing the test and runtime dependencies",
            )

    def _freeze(self, venv: Path) -> list[str]:
        python = str(venv / "bin" / "python")
        frozen = self._uv(
            ["pip", "freeze", "--python", python],
            timeout=VENV_TIMEOUT,
            what="listing the installed packages",
        )
        return [line for line in frozen.splitlines() if line.strip()]

    def _describe(self, venv: Path, installed: list[str], era: EraCheck | None) -> None:
        import json
        from datetime import UTC, datetime

        requirements, error = self.outcome
        description = {
            "description": replace(self.environment, test_extras_error=error, era=era).description,
            "key": self.environment.key,
            "python": self.environment.python_version,
            "interpreter": str(self.interpreter),
            "exclude-newer": self.environment.exclude_newer,
            "index-url": self.options.index_url,
            "test-dependencies": self.test_dependencies,
            "dependencies": self.dependencies,
            "test-extras": self.options.test_extras,
            "declared-test-dependencies": self.declared_tests,
            "test-extras-error": error,
            "requirements": requirements,
            "era-tools": self._era_tools(),
            "installed": installed,
            "era": era.model_dump(mode="json") if era else None,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        (venv / MARKER).write_text(json.dumps(description, indent=2) + "\n", encoding="utf-8")

    def _uv(self, args: list[str], *, timeout: float, what: str) -> str:
        return run_uv(args, timeout=timeout, what=what, cwd=self.environment.path.parent)


@hookimpl
def bugbout_environments() -> Iterator[EnvironmentPlugin]:
    yield EnvironmentPlugin(
        name="uv",
        factory=UvBuilder,
        options=UvOptions,
        description="a uv virtual environment per Python version and dependency era (default)",
    )
