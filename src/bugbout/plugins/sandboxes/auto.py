"""The ``auto`` sandbox: the platform's own, bubblewrap on Linux and seatbelt on macOS.

It never falls back to running unconfined: if the platform's sandbox does not work,
:meth:`Auto.problem` says why and how to fix it, or to opt out with ``sandbox=none``.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator

from bugbout.sandboxes import Confinement, NoOptions, PluginError, Sandbox, SandboxPlugin, hookimpl

NO_SANDBOX = "set sandbox=none to run agents unconfined"
PLATFORM_SANDBOXES = {"linux": ("bubblewrap",), "darwin": ("seatbelt",)}
"""The sandboxes each platform can have, preferred first, by plugin name."""


def candidates() -> list[Sandbox]:
    """The sandboxes this platform can have, preferred first, built by the registry."""
    from bugbout.sandboxes import create_plugin

    platform = "linux" if sys.platform.startswith("linux") else sys.platform
    return [create_plugin(SandboxPlugin, name) for name in PLATFORM_SANDBOXES.get(platform, ())]


class Auto:
    """Delegates to the first of :func:`candidates` that works (chosen once)."""

    name = "auto"

    def __init__(self, options: NoOptions | None = None) -> None:
        self.options = options or NoOptions()
        self._lock = threading.Lock()
        self._chosen: Sandbox | None = None
        self._problem: str | None = None
        self._decided = False

    @property
    def chosen(self) -> Sandbox | None:
        """The sandbox in use, or ``None`` if none works here (see :meth:`problem`)."""
        self._decide()
        return self._chosen

    def problem(self) -> str | None:
        """``None`` once a sandbox works, else what was tried and how to fix it."""
        self._decide()
        return self._problem

    def wrap(self, argv: list[str], confinement: Confinement) -> list[str]:
        """``argv`` wrapped by the chosen sandbox; an error if there is none."""
        chosen = self.chosen
        if chosen is None:
            raise PluginError(self._problem or f"no sandbox works here; {NO_SANDBOX}")
        return chosen.wrap(argv, confinement)

    def _decide(self) -> None:
        with self._lock:
            if self._decided:
                return
            tried: list[str] = []
            for sandbox in candidates():
                problem = sandbox.problem()
                if problem is None:
                    self._chosen = sandbox
                    break
                tried.append(f"{sandbox.name}: {problem}")
            else:
                if tried:
                    self._problem = "no sandbox works here; tried " + "; ".join(tried)
                else:
                    self._problem = (
                        f"bugbout has no sandbox for {sys.platform} (bubblewrap needs Linux, "
                        f"seatbelt macOS); {NO_SANDBOX}"
                    )
            self._decided = True


@hookimpl
def bugbout_sandboxes() -> Iterator[SandboxPlugin]:
    yield SandboxPlugin(
        name=Auto.name,
        factory=Auto,
        description="the platform's sandbox: bubblewrap on Linux, seatbelt on macOS",
    )
