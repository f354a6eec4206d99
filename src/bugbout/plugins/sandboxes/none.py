"""The ``none`` sandbox: an explicit opt-out; commands run unconfined, as they are.

Agents and tests then see the whole machine: the original repository (whose history
holds every fix), the store, the user's HOME, and the network.
"""

from __future__ import annotations

from collections.abc import Iterator

from bugbout.sandboxes import Confinement, NoOptions, SandboxPlugin, hookimpl


class NoSandbox:
    """Confines nothing."""

    name = "none"

    def __init__(self, options: NoOptions | None = None) -> None:
        self.options = options or NoOptions()

    def problem(self) -> str | None:
        return None

    def wrap(self, argv: list[str], confinement: Confinement) -> list[str]:
        """``argv`` itself (a copy)."""
        return list(argv)


@hookimpl
def bugbout_sandboxes() -> Iterator[SandboxPlugin]:
    yield SandboxPlugin(
        name=NoSandbox.name,
        factory=NoSandbox,
        description="no sandbox: agents and tests see the whole machine and the network",
    )
