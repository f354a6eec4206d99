"""What the ``uv`` and ``podman`` environment builders share: their uv options and the
one-line description of an environment."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bugbout.core.contract.types import Options
from bugbout.core.plumbing.environments.managed_pythons import PythonDownloads

if TYPE_CHECKING:
    from collections.abc import Mapping


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
    install_timeout: float = 600.0
    """Seconds one resolution or installation by uv may take."""


def describe(
    interpreter: str,
    exclude_newer: str | None,
    left_out: Mapping[str, str],
    era_note: str = "",
) -> str:
    """An environment's one-line description: its interpreter, its dependencies' era (and
    what the era check repaired), and the declared test dependencies it lacks, with why."""
    era = f"deps as of {exclude_newer}" if exclude_newer else "latest deps"
    if era_note:
        era += f"; {era_note}"
    description = f"{interpreter}, {era}"
    if left_out:
        description += ", without " + ", ".join(f"{n} ({why})" for n, why in left_out.items())
    return description
