"""Who a confined process is on the host when bugbout runs as root.

A uid 0 without capabilities is still root to the kernel's permission checks: it owns
every root-owned file, and the checks that look only at the uid (a sysctl's mode, a
daemon that trusts a peer whose credentials say uid 0) let it through. So when bugbout
runs as root, a sandbox that can runs each confined process as an unprivileged host user
instead (:data:`CONFINED_USER`, the conventional ``nobody``), and bugbout hands that user
the trees it must write: the cached tree of a commit when it is extracted, an overlay's
upper directory and a copy's files before each run, a private HOME. Root reads and
removes them as before. As an ordinary user nothing changes: a confined process is
already that user.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
from pathlib import Path

from bugbout.sandbox.confinement import Confinement
from bugbout.sandbox.layering import resolve

CONFINED_USER = (65534, 65534)
"""The host uid and gid a confined process runs as when bugbout is root: ``nobody`` and
``nogroup`` on Debian and Ubuntu (``nobody`` on Fedora), which own no file of the system."""


def confined_owner() -> tuple[int, int] | None:
    """The host uid and gid confined processes run as, when they are not bugbout's own
    (bugbout runs as root, and ``setpriv`` is here to become them); ``None`` when bugbout
    is an ordinary user."""
    return CONFINED_USER if os.geteuid() == 0 and setpriv() is not None else None


@functools.cache
def setpriv() -> str | None:
    """util-linux's ``setpriv``, which becomes the confined user inside a sandbox."""
    return shutil.which("setpriv")


def hand_over(path: Path) -> None:
    """Give ``path`` and everything below it (not following symlinks, not crossing into
    another filesystem) to the confined user, when there is one; what is already its own
    is left alone, so a second call on an unchanged tree only reads it. The walk holds
    each folder open and changes entries through it (:func:`os.fwalk`): a folder the
    confined user swaps for a symlink meanwhile leads nowhere outside the tree."""
    owner = confined_owner()
    if owner is None:
        return
    try:
        top = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(top.st_mode):
        for _, folders, files, fd in os.fwalk(path, follow_symlinks=False):
            for name in (*folders, *files):
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if (info.st_uid, info.st_gid) != owner:
                    os.chown(name, *owner, dir_fd=fd, follow_symlinks=False)
            folders[:] = [
                name
                for name in folders
                if os.stat(name, dir_fd=fd, follow_symlinks=False).st_dev == top.st_dev
            ]
    if (top.st_uid, top.st_gid) != owner:  # last: a tree whose top is handed over is whole
        os.chown(path, *owner, follow_symlinks=False)


def handed_over(path: Path) -> bool:
    """Whether ``path`` (the top of a tree :func:`hand_over` finished) is the confined
    user's, or there is no confined user."""
    owner = confined_owner()
    if owner is None:
        return True
    info = os.lstat(path)
    return (info.st_uid, info.st_gid) == owner


def closed_folders(paths: list[Path], owner: tuple[int, int]) -> tuple[Path, ...]:
    """Every folder above one of ``paths`` that ``owner`` may not enter (root's HOME, a
    private temporary folder, one inside another). A sandbox puts an empty folder in its
    place, holding only the paths it exposes below: what the user could not enter stays
    out of reach, and the paths it is given are reachable."""
    closed: set[Path] = set()
    for path in paths:
        for folder in reversed(path.parents):
            if folder in closed:
                continue
            try:
                info = folder.stat()
            except OSError:
                break
            if not _enters(info, owner):
                closed.add(folder)
    return tuple(sorted(closed))


def _enters(info: os.stat_result, owner: tuple[int, int]) -> bool:
    """Whether ``owner`` may search a folder of ``info``'s owner and mode."""
    if info.st_uid == owner[0]:
        return bool(info.st_mode & stat.S_IXUSR)
    if info.st_gid == owner[1]:
        return bool(info.st_mode & stat.S_IXGRP)
    return bool(info.st_mode & stat.S_IXOTH)


def confined_view(confinement: Confinement, owner: tuple[int, int]) -> Confinement:
    """``confinement`` as a sandbox applies it for ``owner``: its working directory and
    writable paths handed over; every folder ``owner`` may not enter on the way to an
    exposed path (a readable one included: a tool's folder in a private temporary one)
    masked, so that the paths exposed below it are reachable and nothing else is."""
    for path in (confinement.workdir, *confinement.writable):
        hand_over(resolve(path))
    exposed = [confinement.workdir, *confinement.writable, *confinement.readable]
    closed = closed_folders([resolve(path) for path in exposed], owner)
    return confinement.model_copy(
        update={
            "masked": (*confinement.masked, *closed),
            "readable": tuple(p for p in confinement.readable if resolve(p) not in closed),
        }
    )
