"""Walking a working copy against its base tree, one directory at a time.

``walk`` goes down both trees together, each directory's entries sorted as git sorts
paths (a directory as its name and ``/``), and yields every path that is a file or a
symlink in either tree, in sorted order, with what ``lstat`` saw on each side. It holds
one directory listing per level, never the tree; caches are left out; symlinks are not
followed; sockets, FIFOs and devices are skipped. It stops, with ``LimitExceeded``, as
soon as the working copy holds more than ``files`` entries the base does not, even
inside one huge directory.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from bugbout.core.errors import BugboutError
from bugbout.core.limits import LimitExceeded, exceeded

CHUNK = 1 << 20
"""Bytes compared at a time."""
REGULAR, EXECUTABLE, SYMLINK = "100644", "100755", "120000"


class WalkError(BugboutError):
    """A tree could not be read."""


@dataclass(frozen=True, slots=True)
class Entry:
    """A file or symlink of a tree, as ``lstat`` saw it."""

    location: str
    """Its path on disk."""
    symlink: bool
    executable: bool
    size: int
    mtime_ns: int

    @property
    def mode(self) -> str:
        if self.symlink:
            return SYMLINK
        return EXECUTABLE if self.executable else REGULAR

    def content(self) -> bytes:
        """A file's bytes, or a symlink's target."""
        try:
            if self.symlink:
                return os.readlink(os.fsencode(self.location))  # noqa: PTH115 - bytes
            with open(self.location, "rb") as handle:  # noqa: PTH123
                return handle.read()
        except OSError as exc:
            raise WalkError(f"cannot read {self.location}: {exc.strerror}") from exc

    def same_content(self, other: Entry) -> bool:
        """Whether two files (or two symlinks) hold the same bytes, read a chunk at a time."""
        if self.symlink or other.symlink:
            return self.content() == other.content()
        try:
            with open(self.location, "rb") as mine, open(other.location, "rb") as theirs:  # noqa: PTH123
                while True:
                    chunk = mine.read(CHUNK)
                    if chunk != theirs.read(CHUNK):
                        return False
                    if not chunk:
                        return True
        except OSError as exc:
            raise WalkError(f"cannot read {exc.filename}: {exc.strerror}") from exc


_Listing = dict[str, os.DirEntry[str]]
"""A directory's entries by sort key: the name, with ``/`` after a directory's."""
_Step = tuple[str, os.DirEntry[str] | None, os.DirEntry[str] | None]
"""A sort key of one directory, with its entry in the base and in the working copy."""


class Ignored(Protocol):
    def __call__(self, name: str, *, directory: bool = False) -> bool: ...


def walk(
    base: Path, work: Path, *, files: int, ignored: Ignored
) -> Iterator[tuple[str, Entry | None, Entry | None]]:
    """``(path, base entry, work entry)`` for every file or symlink of either tree, in
    path order (``None`` where a tree has none). ``ignored(name, directory=...)`` says
    which names are caches."""
    added = 0
    levels: list[tuple[str, Iterator[_Step]]] = []

    def enter(prefix: str, old_dir: str | None, new_dir: str | None) -> None:
        nonlocal added
        old = _list(old_dir, None, ignored)
        new = _list(new_dir, len(old) + files - added, ignored)
        added += sum(1 for key in new if key not in old)
        if added > files:
            raise LimitExceeded(exceeded("files", added, files))
        keys = sorted(old.keys() | new.keys())
        levels.append((prefix, ((key, old.get(key), new.get(key)) for key in keys)))

    enter("", str(base), str(work))
    while levels:
        prefix, steps = levels[-1]
        step = next(steps, None)
        if step is None:
            levels.pop()
            continue
        key, old, new = step
        if key.endswith("/"):
            enter(prefix + key, _path(old), _path(new))
            continue
        old_entry, new_entry = _entry(old), _entry(new)
        if old_entry is not None or new_entry is not None:
            yield prefix + key, old_entry, new_entry


def _list(directory: str | None, most: int | None, ignored: Ignored) -> _Listing:
    """A directory's entries by sort key, caches left out; it stops a little past
    ``most`` entries. An absent directory (``None``) has none."""
    listing: _Listing = {}
    if directory is None:
        return listing
    try:
        scanner = os.scandir(directory)
    except OSError as exc:
        raise WalkError(f"cannot list {directory}: {exc.strerror}") from exc
    with scanner:
        for entry in scanner:
            folder = entry.is_dir(follow_symlinks=False)
            if ignored(entry.name, directory=folder):
                continue
            listing[entry.name + "/" if folder else entry.name] = entry
            if most is not None and len(listing) > most:
                break
    return listing


def _path(entry: os.DirEntry[str] | None) -> str | None:
    return entry.path if entry is not None else None


def _entry(entry: os.DirEntry[str] | None) -> Entry | None:
    """A file's or symlink's ``Entry``; ``None`` for anything else, or nothing."""
    if entry is None:
        return None
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError as exc:
        raise WalkError(f"cannot read {entry.path}: {exc.strerror}") from exc
    symlink = stat.S_ISLNK(info.st_mode)
    if not (symlink or stat.S_ISREG(info.st_mode)):
        return None
    return Entry(
        entry.path,
        symlink,
        not symlink and bool(info.st_mode & stat.S_IXUSR),
        info.st_size,
        info.st_mtime_ns,
    )
