"""The ``__NAME__`` sandbox: the platform's sandbox, with confined processes at a lower
CPU priority.

A sandbox wraps a command line so that it runs confined (:class:`Confinement`: its
working directory writable, private places masked, no network unless allowed). This one
delegates the confinement to another sandbox plugin, by default bugbout's ``auto``
(bubblewrap on Linux, seatbelt on macOS), and runs the command under ``nice`` inside it.
"""

from __future__ import annotations

from collections.abc import Iterator

from bugbout.sandboxes import Confinement, Options, SandboxPlugin, create_plugin, hookimpl
from pydantic import Field


class __TITLE__Options(Options):
    """Options of the ``__NAME__`` sandbox."""

    niceness: int = Field(default=10, ge=0, le=19)
    """How much lower the confined processes' priority is (``nice -n``)."""
    inner: str = "auto"
    """The sandbox plugin that confines the command."""


class __TITLE__Sandbox:
    """The ``inner`` sandbox's confinement around ``nice -n NICENESS <command>``."""

    name = "__NAME__"

    def __init__(self, options: __TITLE__Options | None = None) -> None:
        self.options = options or __TITLE__Options()
        self.inner = create_plugin(SandboxPlugin, self.options.inner)

    def problem(self) -> str | None:
        return self.inner.problem()

    def wrap(self, argv: list[str], confinement: Confinement) -> list[str]:
        return self.inner.wrap(["nice", "-n", str(self.options.niceness), *argv], confinement)


@hookimpl
def bugbout_sandboxes() -> Iterator[SandboxPlugin]:
    yield SandboxPlugin(
        name=__TITLE__Sandbox.name,
        factory=__TITLE__Sandbox,
        options=__TITLE__Options,
        description="the platform's sandbox, at a lower CPU priority",
    )
