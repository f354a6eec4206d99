"""bugbout's confinement policy: what agents and test runs may never see, and what they
must still be able to read (their toolchains), whatever sandbox enforces it."""

from __future__ import annotations

import functools
import os
import shutil
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import bugbout
from bugbout.core.contract.settings import TestLimitsSettings
from bugbout.core.plumbing.confinement.limits import HeldConfine
from bugbout.sandbox.confinement import Confinement, Sandbox
from bugbout.sandbox.network import offline

Confine = Callable[[list[str], Path, tuple[Path, ...]], list[str]]
"""Wraps a test run's argv for the tree it runs on and the extra paths it may write."""

CREDENTIALS_IN_TOOLCHAINS = (
    ".cargo/credentials", ".cargo/credentials.toml", ".local/share/keyrings",
    ".local/share/gh", ".local/share/python_keyring", ".pyenv/.git",
)  # fmt: skip
"""Secrets that live inside toolchain folders re-exposed from HOME: kept masked."""


def masked_paths(repository: Path, store: Path, home: Path) -> tuple[Path, ...]:
    """Never visible to agents or tests: the ``repository`` (its history holds every fix),
    the ``store``, bugbout's ``home`` (other attempts), the user's HOME, and the
    credentials inside the toolchain folders :func:`readable_paths` re-exposes."""
    user_home = Path.home().resolve()
    paths = {repository, store.resolve(), home.resolve(), user_home}
    paths |= {user_home / name for name in CREDENTIALS_IN_TOOLCHAINS}
    return tuple(sorted(paths))


def readable_paths(executables: Iterable[str]) -> tuple[Path, ...]:
    """Re-exposed read-only inside masked places: the folder and installation prefix of
    each executable (and of the Python bugbout runs on), bugbout's own package (its pytest
    plugin and egress forwarder run inside), and the toolchains on PATH that live in the
    user's HOME (``~/.pyenv``, ``~/.cargo``): tools, not credentials. Worked out once
    per process for the same executables, ``PATH`` and ``HOME`` (every attempt and test
    run asks)."""
    return _readable(tuple(executables), os.environ.get("PATH"), str(Path.home()))


@functools.lru_cache(maxsize=64)
def _readable(executables: tuple[str, ...], search: str | None, user_home: str) -> tuple[Path, ...]:
    paths: set[Path] = {Path(bugbout.__file__).resolve().parent}
    for executable in (*executables, sys.executable):
        found = shutil.which(executable, path=search) if executable else None
        if found:  # its folder too: the way in when the prefix is closed to the process
            for place in (Path(found), Path(os.path.realpath(found))):
                paths.update((place.parent, place.parent.parent))
    home = Path(user_home).resolve()
    for entry in (search or "").split(os.pathsep):
        if entry and Path(entry).is_absolute():
            directory = Path(entry).resolve()
            if directory.is_relative_to(home) and directory.parent != home.parent:
                paths.add(directory.parent)
    return tuple(sorted(p for p in paths if p not in (Path("/"), home)))


def test_confinement(
    limits: TestLimitsSettings, sandbox: Sandbox, home: Path, masked: tuple[Path, ...]
) -> Confine:
    """How test runs are confined: no network, writes only in their own tree, the
    ``masked`` places (:func:`masked_paths`) hidden, each run held to ``limits``
    (``limits.tests``) by the guard. With ``sandbox=none`` only the network is switched
    off, and the limits hold."""
    if sandbox.name == "none":
        return HeldConfine(lambda argv, tree, writable: offline(argv), limits, home)
    return HeldConfine(SandboxConfine(sandbox, masked, limits.tmp), limits, home)


@dataclass(frozen=True)
class SandboxConfine:
    """A test run's argv wrapped in ``sandbox``: its tree its working directory, its
    ``writable`` paths (a private HOME) writable, ``masked`` hidden, the toolchain readable."""

    sandbox: Sandbox
    masked: tuple[Path, ...]
    tmp_size: int | None

    @property
    def overlays(self) -> bool:
        """Whether the wrapped command can run in bugbout's namespace that mounts an
        overlay test tree (not podman's: a test tree is then a plain copy)."""
        return bool(getattr(self.sandbox, "overlays", True))

    def __call__(self, argv: list[str], tree: Path, writable: tuple[Path, ...]) -> list[str]:
        confinement = Confinement(
            workdir=tree,
            writable=writable,
            readable=readable_paths(argv[:1]),
            masked=self.masked,
            tmp_size=self.tmp_size,
        )
        return self.sandbox.wrap(argv, confinement)


def runs_in_overlays(confine: Confine) -> bool:
    """Whether ``confine``'s commands can run where an overlay test tree is mounted."""
    return bool(getattr(confine, "overlays", True))
