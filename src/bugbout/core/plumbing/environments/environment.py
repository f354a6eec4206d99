"""Environment builders: what the project's tests run in.

A builder prepares an :class:`Environment` for one project era (a Python version and
the dependencies as of a fix's date); the environment turns a pytest command line and
the tree under test into the exact command to run. The project itself is never
installed: the tree under test goes on ``PYTHONPATH``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from pydantic import Field

from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.store.records import Exemption, Oracle, Record


class EnvironmentRequest(Record):
    """What a builder is asked for: the environment a task's tests need."""

    project: ProjectSettings
    tree: Path
    """A tree of the project at the fix, to read its declared Python and dependencies from."""
    date: str | None = None
    """The fix's date (ISO 8601): dependencies are resolved as they were then."""
    home: Path
    """``BUGBOUT_HOME``: where environments are cached."""


class Command(Record):
    """A command line ready to run: argv, extra environment variables, working directory."""

    argv: list[str]
    env: dict[str, str] = Field(default_factory=dict)
    cwd: Path
    contained: bool = False
    """The command confines its own run (a container with no network that sees only the
    tree, the extra paths and its private HOME), so test runs do not wrap it in a sandbox."""


class Environment(Protocol):
    """A built environment."""

    @property
    def description(self) -> str:
        """A short description for reports, e.g. ``uv: Python 3.9.18, 2021-06-01``."""
        ...

    @property
    def key(self) -> str:
        """What determines the environment; a changed key invalidates oracles."""
        ...

    def command(self, args: list[str], tree: Path, extra_paths: list[Path]) -> Command:
        """The command that runs ``python -m pytest <args>`` on ``tree``.

        ``extra_paths`` must be on ``PYTHONPATH`` (in that order) before the tree's own
        entries; the working directory is the tree.
        """
        ...


def resolved(environment: Environment) -> tuple[dict[str, str], list[Exemption]]:
    """The versions that matter in ``environment`` and the dependencies exempted from its
    era's date, for builders that say (an optional ``versions`` and ``exempt``)."""
    versions = getattr(environment, "versions", None)
    exempt = getattr(environment, "exempt", None)
    return (
        dict(versions) if isinstance(versions, dict) else {},
        list(exempt) if isinstance(exempt, list) else [],
    )


def revision(builder: object) -> str:
    """How ``builder`` resolves environments, for builders that say (an optional
    ``revision``, which a change of that logic changes): an oracle computed under another
    revision is checked against the environment resolved now (see
    :func:`bugbout.core.truth.oracle.compute_oracle`)."""
    found = getattr(builder, "revision", "")
    return found if isinstance(found, str) else ""


def same_environment(oracle: Oracle, environment: Environment) -> bool:
    """Whether ``oracle`` ran in ``environment``: by key, or for an oracle stored before
    keys were, by its description and the resolved versions and exemptions."""
    if oracle.environment_key:
        return oracle.environment_key == environment.key
    versions, exempt = resolved(environment)
    return (oracle.environment, oracle.versions, oracle.exempt) == (
        environment.description,
        versions,
        exempt,
    )


def lacking(environment: Environment) -> str:
    """What a reason adds when ``environment`` is short of what the fix's era had (for
    builders that say): its Python stood in for the era's (an optional ``python_lacks``),
    or it went without declared test dependencies (an optional ``left_out``). An
    environment failure may explain the outcome."""
    python = getattr(environment, "python_lacks", "")
    left_out = getattr(environment, "left_out", None)
    parts = [python] if isinstance(python, str) and python else []
    if isinstance(left_out, dict) and left_out:
        lacks = ", ".join(f"{name} ({why})" for name, why in left_out.items())
        parts.append(f"the environment lacks {lacks}")
    return f"; an environment failure may explain it: {'; '.join(parts)}" if parts else ""


class EnvironmentBuilder(Protocol):
    """What an environment plugin's factory returns."""

    def build(self, request: EnvironmentRequest) -> Environment:
        """Build (or find in the cache) the environment for ``request``.

        Raises :class:`bugbout.core.contract.errors.EnvironmentFailure` with a one-line message
        when it cannot.
        """
        ...
