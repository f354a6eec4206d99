"""The ``interpreter`` environment builder: an existing Python, used as it is.

Nothing is installed: the interpreter must already have pytest and the project's
dependencies. The tree under test goes on ``PYTHONPATH``. When bugbout is installed in
the interpreter (bugbout's own, by default), the pytest plugins that only bugbout's
requirements bring (Hydra's) are left out of the test runs (``-p no:NAME``): those of a
distribution that the project's declared dependencies do not need, directly or not. The
project did not ask for them, and Hydra's alone doubles the time of a small run.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bugbout.environments import EnvironmentPlugin, Options, hookimpl

if TYPE_CHECKING:
    from bugbout.environments import Command, EnvironmentRequest

CHECK_TIMEOUT = 60.0


class InterpreterOptions(Options):
    """Options of the ``interpreter`` environment builder."""

    path: str | None = None
    """The Python executable; by default ``project.interpreter``, else bugbout's own."""


@dataclass(frozen=True)
class InterpreterEnvironment:
    """An existing interpreter that has pytest."""

    python: Path
    python_version: str
    key: str
    import_roots: tuple[str, ...]
    blocked_plugins: tuple[str, ...] = ()
    """pytest plugins left out of every run: bugbout's own (see the module's docstring)."""

    @property
    def description(self) -> str:
        return f"interpreter: Python {self.python_version} ({self.python})"

    def command(self, args: list[str], tree: Path, extra_paths: list[Path]) -> Command:
        """``<python> -m pytest <args>`` in ``tree``, with the tree importable."""
        from bugbout.environments import Command, python_path

        blocked = [option for name in self.blocked_plugins for option in ("-p", f"no:{name}")]
        return Command(
            argv=[str(self.python), "-m", "pytest", *blocked, *args],
            cwd=tree,
            env={"PYTHONPATH": python_path(tree, self.import_roots, extra_paths)},
        )


@dataclass
class InterpreterBuilder:
    """Checks the interpreter once (it exists and imports pytest) and uses it."""

    options: InterpreterOptions = field(default_factory=InterpreterOptions)
    _checked: dict[Path, Probe | Exception] = field(default_factory=dict, init=False, repr=False)

    def build(self, request: EnvironmentRequest) -> InterpreterEnvironment:
        """The configured interpreter, or an EnvironmentFailure saying why it cannot run tests."""
        import sys

        from bugbout.environments import declared_names, digest

        python = locate(self.options.path or request.project.interpreter or sys.executable)
        if python not in self._checked:
            self._checked[python] = _check(python)
        checked = self._checked[python]
        if isinstance(checked, Exception):
            raise checked
        return InterpreterEnvironment(
            python=python,
            python_version=checked.version,
            key=digest("interpreter", str(python), checked.version),
            import_roots=request.project.import_roots,
            blocked_plugins=(
                checked.bugbouts_own(declared_names(request.tree)) if checked.has_bugbout else ()
            ),
        )


def locate(path: str) -> Path:
    """An interpreter given as a path (``~`` allowed) or as a command on ``PATH``."""
    import shutil

    if "/" not in path:
        found = shutil.which(path)
        if found:
            return Path(found)
    return Path(path).expanduser().absolute()


@dataclass(frozen=True)
class Probe:
    """What :mod:`interpreter_probe` found in an interpreter; names normalised (PEP 503)."""

    version: str
    requires: dict[str, list[str]]
    """Each installed distribution: the distributions it requires, extras aside."""
    plugins: tuple[tuple[str, str], ...]
    """Its pytest plugins: ``(entry point, distribution)``."""

    def needed(self, roots: Iterable[str]) -> set[str]:
        """``roots`` and every installed distribution they require, directly or not."""
        found: set[str] = set()
        todo = list(roots)
        while todo:
            name = todo.pop()
            if name not in found:
                found.add(name)
                todo += self.requires.get(name, [])
        return found

    @property
    def has_bugbout(self) -> bool:
        """Whether bugbout is installed in the interpreter (else no plugin is its own)."""
        return "bugbout" in self.requires

    def bugbouts_own(self, declared: set[str]) -> tuple[str, ...]:
        """The plugins that only bugbout brings: of a distribution bugbout needs, and not
        of one the project's ``declared`` distributions need (bugbout itself aside)."""
        if not self.has_bugbout:
            return ()
        own, project = self.needed(["bugbout"]), self.needed(declared - {"bugbout"})
        return tuple(name for name, owner in self.plugins if owner in own - project)


def _check(python: Path) -> Probe | Exception:
    """What the probe finds in ``python`` if it runs and imports pytest, else the failure
    to raise."""
    import json
    import subprocess

    from bugbout.environments import EnvironmentFailure

    if not python.is_file():
        return EnvironmentFailure(
            f"Python interpreter {python} does not exist; set environment.path or "
            "project.interpreter to a Python executable, or use environment=uv"
        )
    try:
        result = subprocess.run(
            [str(python), "-c", Path(__file__).with_name("interpreter_probe.py").read_text()],
            capture_output=True,
            text=True,
            timeout=CHECK_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return EnvironmentFailure(f"Python interpreter {python} cannot run: {exc}")
    if result.returncode == 0 and result.stdout.strip():
        try:  # the last line: a sitecustomize may print before it
            found = json.loads(result.stdout.strip().splitlines()[-1])
            plugins = tuple((name, owner) for name, owner in found["plugins"])
            return Probe(found["version"], dict(found["requires"]), plugins)
        except (ValueError, KeyError, TypeError):
            return EnvironmentFailure(
                f"Python interpreter {python} printed what bugbout cannot read: "
                f"{result.stdout.strip()[-200:]!r}; check its sitecustomize, or use environment=uv"
            )
    last = (result.stderr.strip().splitlines() or ["no output"])[-1]
    if "pytest" in last:
        return EnvironmentFailure(
            f"Python interpreter {python} has no pytest; install it there or use environment=uv"
        )
    return EnvironmentFailure(f"Python interpreter {python} does not start: {last}")


@hookimpl
def bugbout_environments() -> Iterator[EnvironmentPlugin]:
    yield EnvironmentPlugin(
        name="interpreter",
        factory=InterpreterBuilder,
        options=InterpreterOptions,
        description="an existing Python interpreter with pytest, used as it is (no installs)",
    )
