"""The ``interpreter`` environment builder: an existing Python, used as it is.

Nothing is installed: the interpreter must already have pytest and the project's
dependencies. The tree under test goes on ``PYTHONPATH``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bugbout import EnvironmentPlugin, hookimpl
from bugbout.core.contract.types import Options

if TYPE_CHECKING:
    from bugbout.core.plumbing.environment import Command, EnvironmentRequest

CHECK_TIMEOUT = 60.0
_CHECK = "import sys, pytest; sys.stdout.write('%d.%d.%d' % tuple(sys.version_info[:3]))"


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

    @property
    def description(self) -> str:
        return f"interpreter: Python {self.python_version} ({self.python})"

    def command(self, args: list[str], tree: Path, extra_paths: list[Path]) -> Command:
        """``<python> -m pytest <args>`` in ``tree``, with the tree importable."""
        from bugbout.core.plumbing.environment import Command
        from bugbout.core.plumbing.interpreters import python_path

        return Command(
            argv=[str(self.python), "-m", "pytest", *args],
            cwd=tree,
            env={"PYTHONPATH": python_path(tree, self.import_roots, extra_paths)},
        )


@dataclass
class InterpreterBuilder:
    """Checks the interpreter once (it exists and imports pytest) and uses it."""

    options: InterpreterOptions = field(default_factory=InterpreterOptions)
    _checked: dict[Path, str | Exception] = field(default_factory=dict, init=False, repr=False)

    def build(self, request: EnvironmentRequest) -> InterpreterEnvironment:
        """The configured interpreter, or an EnvironmentFailure saying why it cannot run tests."""
        import sys

        from bugbout.core.store.records import digest

        python = locate(self.options.path or request.project.interpreter or sys.executable)
        if python not in self._checked:
            self._checked[python] = _check(python)
        checked = self._checked[python]
        if isinstance(checked, Exception):
            raise checked
        return InterpreterEnvironment(
            python=python,
            python_version=checked,
            key=digest("interpreter", str(python), checked),
            import_roots=request.project.import_roots,
        )


def locate(path: str) -> Path:
    """An interpreter given as a path (``~`` allowed) or as a command on ``PATH``."""
    import shutil

    if "/" not in path:
        found = shutil.which(path)
        if found:
            return Path(found)
    return Path(path).expanduser().absolute()


def _check(python: Path) -> str | Exception:
    """``python``'s version if it runs and imports pytest, else the failure to raise."""
    import subprocess

    from bugbout.core.contract.errors import EnvironmentFailure

    if not python.is_file():
        return EnvironmentFailure(
            f"Python interpreter {python} does not exist; set environment.path or "
            "project.interpreter to a Python executable, or use environment=uv"
        )
    try:
        result = subprocess.run(
            [str(python), "-c", _CHECK],
            capture_output=True,
            text=True,
            timeout=CHECK_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return EnvironmentFailure(f"Python interpreter {python} cannot run: {exc}")
    if result.returncode == 0 and result.stdout.strip():
        return result.stdout.strip()
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
