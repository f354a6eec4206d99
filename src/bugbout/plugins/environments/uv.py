"""The ``uv`` environment builder (the default): one virtual environment per project era.

An era is a Python version and the project's dependencies as they were at a fix: uv
resolves them with ``--exclude-newer`` set to the first day of the month after the fix,
so fixes of one month share an environment. Environments are cached in
``BUGBOUT_HOME/envs/<key>``; the project itself is never installed.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from bugbout import EnvironmentPlugin, hookimpl

if TYPE_CHECKING:
    from collections.abc import Iterator

    from bugbout.core.environment import Command, EnvironmentRequest

MARKER = "bugbout-env.json"
"""Written last into a built environment: its presence means the build completed."""
VENV_TIMEOUT = 120.0
INSTALL_TIMEOUT = 600.0
_CROSS = "\u00d7"  # how uv marks errors and causes on a terminal
_ARROW = "\u2570\u2500\u25b6"


class UvOptions(BaseModel):
    """Options of the ``uv`` environment builder."""

    model_config = ConfigDict(
        extra="forbid", alias_generator=lambda n: n.replace("_", "-"), populate_by_name=True
    )

    exclude_newer: bool = True
    """Resolve dependencies as of the fix's date; off: the newest releases."""
    index_url: str | None = None
    """A package index to use instead of PyPI."""


@dataclass(frozen=True)
class UvEnvironment:
    """A virtual environment built by uv."""

    path: Path
    python_version: str
    exclude_newer: str | None
    key: str
    import_root: str

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    @property
    def description(self) -> str:
        era = f"deps as of {self.exclude_newer}" if self.exclude_newer else "latest deps"
        return f"uv: Python {self.python_version}, {era}"

    def command(self, args: list[str], tree: Path, extra_paths: list[Path]) -> Command:
        """``<env>/bin/python -m pytest <args>`` in ``tree``, with the tree importable."""
        from bugbout.core.environment import Command
        from bugbout.core.project_metadata import python_path

        return Command(
            argv=[str(self.python), "-m", "pytest", *args],
            cwd=tree,
            env={
                "PYTHONPATH": python_path(tree, self.import_root, extra_paths),
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

    def build(self, request: EnvironmentRequest) -> UvEnvironment:
        """The environment for ``request``'s era, built once per key."""
        import json

        from bugbout.core import project_metadata as meta
        from bugbout.core.records import digest

        dependencies = [
            d for d in meta.declared_dependencies(request.tree) if not d.startswith("-")
        ]
        _, interpreter = meta.choose_python(
            meta.declared_python(request.tree),
            request.date,
            meta.available_interpreters(),
            request.project.python,
        )
        version = meta.interpreter_version(interpreter)
        exclude_newer = (
            exclude_newer_date(request.date)
            if self.options.exclude_newer and request.date
            else None
        )
        test_dependencies = list(request.project.test_dependencies)
        key = digest(
            "uv",
            version,
            json.dumps(sorted(dependencies)),
            json.dumps(sorted(test_dependencies)),
            exclude_newer or "",
            self.options.index_url or "",
        )
        if key in self._built:
            return self._built[key]
        environment = UvEnvironment(
            path=request.home / "envs" / key,
            python_version=version,
            exclude_newer=exclude_newer,
            key=key,
            import_root=request.project.import_root,
        )
        if not _complete(environment.path):
            _Build(self.options, environment, interpreter, test_dependencies, dependencies).run()
        self._built[key] = environment
        return environment


def _complete(path: Path) -> bool:
    return (path / MARKER).is_file() and (path / "bin" / "python").exists()


@dataclass
class _Build:
    """One environment build: in a temporary directory, then renamed into place."""

    options: UvOptions
    environment: UvEnvironment
    interpreter: Path
    test_dependencies: list[str]
    dependencies: list[str]

    def run(self) -> None:
        import shutil
        import tempfile

        final = self.environment.path
        final.parent.mkdir(parents=True, exist_ok=True)
        with _locked(final.parent / f"{final.name}.lock"):
            if _complete(final):  # another process built it while we waited
                return
            for stale in [final, *final.parent.glob(f".{final.name}-*")]:
                if stale.exists():  # left by a build that was killed
                    shutil.rmtree(stale, ignore_errors=True)
            scratch = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=final.parent))
            try:
                venv = scratch / "env"
                self._create(venv)
                installed = self._install(venv)
                self._describe(venv, installed)
                venv.rename(final)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)

    def _create(self, venv: Path) -> None:
        self._uv(
            ["venv", "--no-project", "--relocatable", "--python", str(self.interpreter), str(venv)],
            timeout=VENV_TIMEOUT,
            what=f"creating a Python {self.environment.python_version} environment",
        )

    def _install(self, venv: Path) -> list[str]:
        python = str(venv / "bin" / "python")
        requirements = list(dict.fromkeys([*self.test_dependencies, *self.dependencies]))
        options = []
        if self.environment.exclude_newer:
            options += ["--exclude-newer", self.environment.exclude_newer]
        if self.options.index_url:
            options += ["--index-url", self.options.index_url]
        if requirements:
            self._uv(
                ["pip", "install", "--python", python, *options, *requirements],
                timeout=INSTALL_TIMEOUT,
                what="installing the test and runtime dependencies",
            )
        frozen = self._uv(
            ["pip", "freeze", "--python", python],
            timeout=VENV_TIMEOUT,
            what="listing the installed packages",
        )
        return [line for line in frozen.splitlines() if line.strip()]

    def _describe(self, venv: Path, installed: list[str]) -> None:
        import json
        from datetime import UTC, datetime

        description = {
            "description": self.environment.description,
            "key": self.environment.key,
            "python": self.environment.python_version,
            "interpreter": str(self.interpreter),
            "exclude-newer": self.environment.exclude_newer,
            "index-url": self.options.index_url,
            "test-dependencies": self.test_dependencies,
            "dependencies": self.dependencies,
            "installed": installed,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        (venv / MARKER).write_text(json.dumps(description, indent=2) + "\n", encoding="utf-8")

    def _uv(self, args: list[str], *, timeout: float, what: str) -> str:
        """Run uv; its output, or an EnvironmentFailure naming the cause and the command."""
        import shlex
        import subprocess

        from bugbout.core.errors import EnvironmentFailure

        argv = [_uv_binary(), *args]
        shown = shlex.join(["uv", *args])
        env = {
            **os.environ,
            "UV_PYTHON_DOWNLOADS": "never",
            "UV_NO_CONFIG": "1",
            "UV_NO_PROGRESS": "1",
        }
        env.pop("VIRTUAL_ENV", None)
        try:
            result = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                env=env,
                cwd=self.environment.path.parent,
            )
        except subprocess.TimeoutExpired:
            raise EnvironmentFailure(
                f"{what} timed out after {timeout:.0f} s (command: {shown})"
            ) from None
        except OSError as exc:
            raise EnvironmentFailure(f"{what} failed: cannot run uv: {exc}") from None
        if result.returncode != 0:
            raise EnvironmentFailure(f"{what} failed: {uv_error(result.stderr)} (command: {shown})")
        return result.stdout


def uv_error(stderr: str) -> str:
    """The meaningful part of uv's error output, as one line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(("error:", _CROSS))]
    causes = [line for line in lines if line.startswith(("cause:", _ARROW, "Caused by:"))]
    parts = [*errors[:1], *causes[-1:]] or [
        line for line in lines if line.strip("^~ ") and not line.startswith("Using ")
    ][-1:]
    return ": ".join(_clean(part) for part in parts) or "no error output"


def _clean(line: str) -> str:
    for prefix in ("error:", "cause:", "Caused by:"):
        if line.startswith(prefix):
            line = line[len(prefix) :]
    return line.lstrip(f"{_CROSS}{_ARROW}\u2502\u251c ").strip().rstrip(":")


def _uv_binary() -> str:
    try:
        import uv

        return str(uv.find_uv_bin())
    except (ImportError, FileNotFoundError):
        import shutil

        from bugbout.core.errors import EnvironmentFailure

        found = shutil.which("uv")
        if not found:
            raise EnvironmentFailure("uv is not installed; `pip install uv`") from None
        return found


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``path``, shared by every process building one key."""
    import fcntl

    with path.open("a") as file:
        fcntl.flock(file, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(file, fcntl.LOCK_UN)


@hookimpl
def bugbout_environments() -> Iterator[EnvironmentPlugin]:
    yield EnvironmentPlugin(
        name="uv",
        factory=UvBuilder,
        options=UvOptions,
        description="a uv virtual environment per Python version and dependency era (default)",
    )
