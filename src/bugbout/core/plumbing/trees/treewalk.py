"""Walking a working copy against its base tree, one directory at a time.

``walk`` goes down both trees together, each directory's entries sorted as git sorts
paths (a directory as its name and ``/``), and yields every path that is a file or a
symlink in either tree, in sorted order, with what ``lstat`` saw on each side. It holds
one directory listing per level, never the tree; caches are left out; symlinks are not
followed; sockets, FIFOs and devices are skipped. It stops, with ``LimitExceeded``, as
soon as the working copy holds more than ``files`` entries the base does not, even
inside one huge directory.

What the working copy holds is the agent's: anything in it that cannot be read (a path
too long for the system, a directory or file it made unreadable) is a
:class:`WorkTreeError` naming the path, the agent's doing; a failure to read the base
tree, bugbout's own, is a plain :class:`WalkError`.

``walk_upper`` does the same for an overlay working copy from its upper directory alone
(:mod:`bugbout.sandbox.overlay`): it lists only the directories that hold a change, and
the base's directories only where the upper one names something, or hides them whole.
A whiteout (a character device 0/0) is a deleted path; an opaque directory (the
``trusted.overlay.opaque`` or, mounted with ``userxattr``, ``user.overlay.opaque``
attribute set to ``y``) replaces the base's directory, whose files are all deleted.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from bugbout.core.contract.errors import BugboutError
from bugbout.core.plumbing.confinement.limits import LimitExceeded, exceeded
from bugbout.core.store.filenames import to_text

CHUNK = 1 << 20
"""Bytes compared at a time."""
REGULAR, EXECUTABLE, SYMLINK = "100644", "100755", "120000"


class WalkError(BugboutError):
    """A tree could not be read."""


class WorkTreeError(WalkError):
    """The working copy (the agent's) holds something that cannot be read."""


SHOWN = 80
"""The most characters of a path an error shows (then its length)."""


@dataclass(frozen=True, slots=True)
class Entry:
    """A file or symlink of a tree, as ``lstat`` saw it."""

    location: str
    """Its path on disk."""
    symlink: bool
    executable: bool
    size: int
    mtime_ns: int
    theirs: str | None = None
    """Its path in the working copy, when it is there: a failure to read it is the
    agent's doing."""

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
            raise _error(self.theirs, "read", self.location, exc) from exc

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
            failed = other if exc.filename == other.location else self
            raise _error(failed.theirs, "read", failed.location, exc) from exc


_Listing = dict[str, os.DirEntry[str]]
"""A directory's entries by sort key: the name, with ``/`` after a directory's."""
_Step = tuple[str, os.DirEntry[str] | None, os.DirEntry[str] | None]
"""A sort key of one directory, with its entry in the base and in the working copy."""
OPAQUE = ("trusted.overlay.opaque", "user.overlay.opaque")
"""The attributes that make an upper directory opaque, as a privileged mount and an
unprivileged (``userxattr``) one write them."""


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
        new = _list(new_dir, len(old) + files - added, ignored, theirs=prefix)
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
        old_entry, new_entry = _entry(old), _entry(new, theirs=prefix + key)
        if old_entry is not None or new_entry is not None:
            yield prefix + key, old_entry, new_entry


def walk_upper(
    base: Path, upper: Path, *, files: int, ignored: Ignored
) -> Iterator[tuple[str, Entry | None, Entry | None]]:
    """What :func:`walk` yields for an overlay of ``base`` whose upper directory is
    ``upper``, but for paths that did not change, which it never visits."""
    added = 0
    levels: list[tuple[str, Iterator[tuple[_Step, bool]]]] = []

    def enter(prefix: str, old_dir: str | None, new_dir: str | None, merged: bool) -> None:
        nonlocal added
        old = _list(old_dir, None, ignored)
        new, hidden = _list_upper(new_dir, len(old) + files - added, ignored, prefix)
        if merged:  # only the base's entries the upper directory replaces or hides
            named = {key.rstrip("/") for key in new} | hidden
            old = {key: entry for key, entry in old.items() if key.rstrip("/") in named}
        added += sum(1 for key in new if key not in old)
        if added > files:
            raise LimitExceeded(exceeded("files", added, files))
        levels.append(
            (
                prefix,
                (
                    ((key, old.get(key), new.get(key)), merged and not _opaque(new.get(key)))
                    for key in sorted(old.keys() | new.keys())
                ),
            )
        )

    enter("", str(base), str(upper), merged=True)
    while levels:
        prefix, steps = levels[-1]
        step = next(steps, None)
        if step is None:
            levels.pop()
            continue
        (key, old, new), merged = step
        if key.endswith("/"):
            both = old is not None and new is not None
            enter(prefix + key, _path(old), _path(new), merged and both)
            continue
        old_entry, new_entry = _entry(old), _entry(new, theirs=prefix + key)
        if old_entry is not None or new_entry is not None:
            yield prefix + key, old_entry, new_entry


def _list_upper(
    directory: str | None, most: int, ignored: Ignored, prefix: str
) -> tuple[_Listing, set[str]]:
    """An upper directory's entries by sort key, whiteouts left out, stopping a little
    past ``most``; and the names of its whiteouts. ``prefix``: its path in the tree."""
    listing = _list(directory, most, ignored, theirs=prefix)
    hidden = set()
    for key, entry in list(listing.items()):
        if not key.endswith("/") and _whiteout(entry, prefix + key):
            del listing[key]
            hidden.add(key)
    return listing, hidden


def _whiteout(entry: os.DirEntry[str], relative: str) -> bool:
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError as exc:
        raise _error(relative, "read", entry.path, exc) from exc
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == 0


def _opaque(entry: os.DirEntry[str] | None) -> bool:
    """Whether an upper directory hides the base's directory of the same name."""
    if entry is None or not entry.is_dir(follow_symlinks=False):
        return False
    for name in OPAQUE:
        try:
            if os.getxattr(entry.path, name, follow_symlinks=False) == b"y":
                return True
        except OSError:
            continue  # not set, or attributes not supported here
    return False


def _list(
    directory: str | None, most: int | None, ignored: Ignored, *, theirs: str | None = None
) -> _Listing:
    """A directory's entries by sort key, caches left out; it stops a little past
    ``most`` entries. An absent directory (``None``) has none. ``theirs``: its path in
    the working copy, when it is there."""
    listing: _Listing = {}
    if directory is None:
        return listing
    try:
        scanner = os.scandir(directory)
    except OSError as exc:
        raise _error(theirs, "list", directory, exc) from exc
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


def _entry(entry: os.DirEntry[str] | None, *, theirs: str | None = None) -> Entry | None:
    """A file's or symlink's ``Entry``; ``None`` for anything else, or nothing.
    ``theirs``: its path in the working copy, when it is there."""
    if entry is None:
        return None
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError as exc:
        raise _error(theirs, "read", entry.path, exc) from exc
    symlink = stat.S_ISLNK(info.st_mode)
    if not (symlink or stat.S_ISREG(info.st_mode)):
        return None
    return Entry(
        entry.path,
        symlink,
        not symlink and bool(info.st_mode & stat.S_IXUSR),
        info.st_size,
        info.st_mtime_ns,
        theirs,
    )


def _error(theirs: str | None, verb: str, path: str, exc: OSError) -> WalkError:
    """Why ``path`` could not be listed or read: in the working copy, a
    :class:`WorkTreeError` naming it by ``theirs``, its path there (shortened, with its
    length); elsewhere a :class:`WalkError`."""
    if theirs is None:
        return WalkError(f"cannot {verb} {path}: {exc.strerror}")
    shown = to_text(theirs or ".")
    if len(shown) > SHOWN:
        shown = f"{shown[:SHOWN]}… ({len(os.fsencode(theirs)):,} bytes)"
    return WorkTreeError(f"cannot {verb} '{shown}' in the working copy: {exc.strerror}")
