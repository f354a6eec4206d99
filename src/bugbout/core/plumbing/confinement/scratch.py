"""The folders a test run writes in beside its tree (the test process's ``HOME`` and
``TMPDIR``, the guard's own), named by the bugbout process that made them, so that the
next bugbout removes those a dead one left.

A folder is made in the system's temporary folder as ``bugbout-<use>-<pid>-<start>-<random>``
(``bugbout-home-4242-981234-k2j1x0aa``): the pid of the bugbout that made it and when that
process started (:func:`~bugbout.core.plumbing.confinement.leftovers.started`). It is
removed when the run is over, by a thread of its own while bugbout goes on (the files a
test suite leaves in its HOME take tens of milliseconds to remove on a slow disk; bugbout
waits for the thread before it exits). A bugbout killed with ``kill -9`` leaves it: once per
process, before its first folder, bugbout removes every such folder whose process is gone
(no process has the pid, or one that started at another time), never a live one's.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from bugbout.core.plumbing.confinement.leftovers import started

USES = ("guard", "home")
"""What a folder is for: the guard's limits (``guard``), the test process's ``HOME``."""
_NAME = re.compile(r"bugbout-(?:guard|home)-(\d+)-(\d+)-[^/]+")


@contextlib.contextmanager
def scratch_folder(use: str) -> Iterator[str]:
    """A new folder for ``use`` (one of :data:`USES`), named by this process and removed
    at the end; the folders of processes that are gone are removed first."""
    if use not in USES:
        raise ValueError(f"a scratch folder is for one of {', '.join(USES)}, not {use!r}")
    folder = Path(tempfile.gettempdir())
    _sweep_once(folder)
    me = os.getpid()
    made = tempfile.mkdtemp(prefix=f"bugbout-{use}-{me}-{started(me)}-")
    try:
        yield made
    finally:
        remover = threading.Thread(target=_remove, args=(Path(made),), name=f"remove {made}")
        try:
            remover.start()
        except RuntimeError:  # no thread to be had (the interpreter is ending): here, then
            _remove(Path(made))


def sweep(folder: Path) -> None:
    """Remove every scratch folder in ``folder`` whose process is gone."""
    for path in folder.glob("bugbout-*-*-*-*"):
        named = _NAME.fullmatch(path.name)
        if named is None or path.is_symlink() or not path.is_dir():
            continue
        owner, start = int(named[1]), int(named[2])
        if started(owner) != start:
            _remove(path)


@functools.cache
def _sweep_once(folder: Path) -> None:
    sweep(folder)


def _remove(path: Path) -> None:
    """Remove ``path`` and what the run left in it, folders it made unwritable included
    (as :class:`tempfile.TemporaryDirectory` does); what cannot be removed stays for the
    next bugbout."""

    def unlock(_: Callable[..., object], failed: str, error: tuple[type, object, object]) -> None:
        if not issubclass(error[0], PermissionError):
            return
        place = Path(failed)
        with contextlib.suppress(OSError):
            place.parent.chmod(0o700)
            if place.is_symlink() or not place.is_dir():
                place.unlink()
                return
            place.chmod(0o700)
            _remove(place)

    shutil.rmtree(path, onerror=unlock)
