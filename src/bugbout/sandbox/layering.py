"""The layering of a confinement that the sandboxes share.

A confinement names three kinds of paths: masked (hidden), readable (read-only) and
writable (read-write, with the working directory). They nest: a checkout lives inside
the masked ``BUGBOUT_HOME``, a test environment is readable inside it, and a project's
``.venv`` may be readable inside a writable checkout. :func:`layers` orders them so
that applying them one after the other gives the most specific path the last word.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path

from bugbout.sandbox.confinement import Confinement


class Access(IntEnum):
    """What a confined process may do under a path; at one path the highest wins."""

    MASKED = 0
    READABLE = 1
    WRITABLE = 2


@dataclass(frozen=True)
class Layer:
    """One path of a confinement, resolved, and the access it grants."""

    path: Path
    access: Access


def resolve(path: Path) -> Path:
    """``path`` made absolute with every symbolic link resolved (it need not exist)."""
    return Path(os.path.realpath(path))


def layers(confinement: Confinement) -> list[Layer]:
    """Every path of ``confinement``, resolved, ancestors before descendants.

    Applied in this order, a path inside another overrides it (a readable directory
    inside a masked one is visible, a masked one inside a writable one is hidden). A
    path listed twice keeps its highest access: re-exposing a masked path wins.
    """
    access: dict[Path, Access] = {}
    groups = (
        (Access.MASKED, confinement.masked),
        (Access.READABLE, confinement.readable),
        (Access.WRITABLE, (*confinement.writable, confinement.workdir)),
    )
    for kind, paths in groups:
        for path in paths:
            resolved = resolve(path)
            access[resolved] = max(access.get(resolved, kind), kind)
    ordered = sorted(access, key=lambda path: (len(path.parts), str(path)))
    return [Layer(path, access[path]) for path in ordered]


def inside(path: Path, others: list[Path]) -> bool:
    """Whether ``path`` is one of ``others`` or lies below one of them."""
    return any(path.is_relative_to(other) for other in others)
