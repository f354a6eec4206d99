"""Which Python eras this machine can test: found here, installed for bugbout by uv,
downloadable by uv (``environment.python-downloads=automatic``), or none of these."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from bugbout.core.contract.errors import BugboutError
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings
from bugbout.core.plumbing.environments.managed_pythons import ManagedPythons
from bugbout.onboarding.doctor.check import Check


@runtime_checkable
class ProvidesPythons(Protocol):
    """An environment builder that gets the Pythons of eras this machine lacks (``uv``)."""

    def pythons(self, home: Path) -> ManagedPythons: ...


@dataclass(frozen=True)
class Eras:
    """The Python versions bugbout knows, by how this machine would get them."""

    local: list[str]
    installed: list[str]
    """Installed by uv into bugbout's home (``BUGBOUT_HOME/pythons``)."""
    downloadable: list[str]
    missing: list[str]
    downloads: str | None
    """``environment.python-downloads``; None when the environment builder is not ``uv``."""

    def runnable(self, version: str) -> bool:
        return version in (*self.local, *self.installed, *self.downloadable)

    @property
    def detail(self) -> str:
        """``found here: 3.9, 3.10; downloadable by uv: 3.8; neither: 3.7 (...)``."""
        parts = [f"eras found here: {', '.join(self.local) or 'none'}"]
        for what, versions in (
            ("installed for bugbout", self.installed),
            ("downloadable by uv", self.downloadable),
            ("neither", self.missing),
        ):
            if versions:
                parts.append(f"{what}: {', '.join(versions)}")
        setting = (
            f"environment.python-downloads={self.downloads}"
            if self.downloads
            else "only environment=uv downloads"
        )
        return f"{'; '.join(parts)} ({setting})"


def machine_eras(settings: BoutSettings, plugins: Plugins) -> Eras:
    """The eras this machine can test with the chosen environment builder."""
    from bugbout.core.plumbing.environments.interpreters import available_interpreters, eras
    from bugbout.core.plumbing.runtime.home import bugbout_home

    local = available_interpreters()
    others = [v for v in eras(local) if v not in local]
    builder = None
    if settings.environment.name == "uv":
        with contextlib.suppress(BugboutError):  # a bad option is reported when a bout starts
            builder = plugins.create("environment", "uv", settings.environment.options)
    if not isinstance(builder, ProvidesPythons):
        return Eras(list(local), [], [], others, None)
    managed = builder.pythons(bugbout_home())
    installed = [v for v in others if managed.find(v) is not None]
    others = [v for v in others if v not in installed]
    offered = set(managed.downloadable()) if managed.downloads == "automatic" and others else set()
    downloadable = [v for v in others if v in offered]
    missing = [v for v in others if v not in offered]
    return Eras(list(local), installed, downloadable, missing, managed.downloads)


def python_check(settings: BoutSettings, plugins: Plugins, *, configured: bool = True) -> Check:
    """The eras test environments can run; a pinned ``project.python`` among them."""
    from bugbout.core.plumbing.environments.interpreters import pinned_minor

    found = machine_eras(settings, plugins)
    pinned = settings.project.python if configured else None
    if pinned and not found.runnable(minor := pinned_minor(pinned)):
        fix = f"install it, e.g. `pyenv install {minor}`, or change project.python"
        if found.downloads and found.downloads != "automatic":
            fix += ", or set environment.python-downloads=automatic"
        return Check(
            "python",
            False,
            f"project.python is {pinned} but Python {minor} is neither installed nor "
            f"downloadable ({found.detail})",
            fix,
        )
    return Check("python", True, found.detail)
