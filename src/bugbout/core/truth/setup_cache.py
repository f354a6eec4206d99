"""What running a ``setup.py`` found, kept by what it read, so the next task whose
``setup.py`` reads the same does not run it again (each run starts an interpreter and
imports setuptools, confined: a third of a second).

What a run read is every file it opened for reading and every folder it listed
(:mod:`bugbout.core.truth.setup_run`), each with its fingerprint: a file of the tree by
the digest of its content (a folder by the names in it), any other by its size and
modification time (a folder by its modification time). In ``BUGBOUT_HOME/setup-py/``, a
folder per ``setup.py`` (by its digest) lists the sets of paths its runs read
(``read.json``), and keeps each run's keywords in a file named by the digest of those
paths' fingerprints: a tree gets the keywords of a run that read the same paths, each as
it is in this tree. A run that started a process, opened a file by descriptor, saw the
tree at another path, or named a path that is neither in the tree nor on this machine (a
container's own) is not kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

from bugbout.core.plumbing.confinement.confine import Confine
from bugbout.core.truth.setup_run import SetupRun, setup_py_run

LARGEST = 16_000_000
"""The largest file of the tree read to key an entry (a larger one keeps none)."""
TREE = "tree:"
"""How a path of the tree is named in an entry: relative to it, the tree being another
folder for each task."""

Inputs = dict[str, dict[str, object]]


def cached_setup_py(tree: Path, confine: Confine, cache: Path) -> dict[str, object] | None:
    """The keywords ``tree/setup.py`` passes to ``setup()``
    (:func:`~bugbout.core.truth.setup_run.executed_setup_py`), kept in ``cache`` from a
    run whose inputs were all as they are in ``tree``, else from running it (then kept)."""
    script = tree / "setup.py"
    if not script.is_file():
        return None
    folder = cache / hashlib.sha256(script.read_bytes()).hexdigest()
    shapes = _read(folder / "read.json")
    for shape in shapes if isinstance(shapes, list) else []:
        if isinstance(shape, dict):
            found = _read(folder / f"{_digest(_fingerprints(shape, tree))}.json")
            if isinstance(found, dict):
                return found
    run = setup_py_run(tree, confine)
    if run is None:
        return None
    inputs = _inputs(run, tree)
    if inputs is not None:
        shape = {kind: sorted(names) for kind, names in inputs.items()}
        known = shapes if isinstance(shapes, list) else []
        _write(folder / f"{_digest(inputs)}.json", run.keywords)
        if shape not in known:
            _write(folder / "read.json", [*known, shape])
    return run.keywords


def _digest(inputs: Inputs) -> str:
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def _inputs(run: SetupRun, tree: Path) -> Inputs | None:
    """What ``run`` read, by name, with each one's fingerprint now; ``None`` when it
    cannot be keyed."""
    if run.spawned or None in run.read or None in run.listed:
        return None
    if run.cwd is None or os.path.normpath(run.cwd) != os.path.realpath(tree):
        return None  # it saw the tree elsewhere: its paths are not this machine's
    named: Inputs = {
        "files": {_name(path, tree): None for path in run.read if path is not None},
        "folders": {_name(path, tree): None for path in run.listed if path is not None},
    }
    found = _fingerprints(named, tree)
    outside = [
        value
        for kind in ("files", "folders")
        for name, value in found[kind].items()
        if not name.startswith(TREE)
    ]
    if None in outside or _UNREADABLE in found["files"].values():
        return None
    return found


def _name(path: str, tree: Path) -> str:
    """``path`` as an entry names it: relative to ``tree`` when it lies there."""
    normal = os.path.normpath(path)
    root = os.path.realpath(tree)
    if normal == root or normal.startswith(root + os.sep):
        return TREE + os.path.relpath(normal, root)
    return normal


_UNREADABLE = "unreadable"
"""A file of the tree that is not a regular file of a size read here."""


def _fingerprints(named: Mapping[str, object], tree: Path) -> Inputs:
    """``named``'s paths (``files`` and ``folders``, lists or dicts of names), each with
    its fingerprint now (``None``: it does not exist)."""
    files = named.get("files")
    folders = named.get("folders")
    if not isinstance(files, (list, dict)) or not isinstance(folders, (list, dict)):
        return {}
    return {
        "files": {str(name): _file(str(name), tree) for name in files},
        "folders": {str(name): _folder(str(name), tree) for name in folders},
    }


def _file(name: str, tree: Path) -> object:
    """A file's fingerprint: its content's digest in the tree, else its size and time."""
    path = tree / name[len(TREE) :] if name.startswith(TREE) else Path(name)
    try:
        found = path.stat()
    except OSError:
        return None
    if not name.startswith(TREE):
        return [found.st_size, found.st_mtime_ns]
    if not stat.S_ISREG(found.st_mode) or found.st_size > LARGEST:
        return _UNREADABLE
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _folder(name: str, tree: Path) -> object:
    """A folder's fingerprint: its names in the tree, else its modification time."""
    path = tree / name[len(TREE) :] if name.startswith(TREE) else Path(name)
    try:
        if name.startswith(TREE):
            return sorted(entry.name for entry in path.iterdir())
        return path.stat().st_mtime_ns
    except OSError:
        return None


def _read(where: Path) -> object:
    """The JSON kept at ``where`` (``None`` when unreadable)."""
    try:
        return json.loads(where.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _write(where: Path, value: object) -> None:
    """Replace ``where`` with ``value`` at once (a reader sees the old or the new)."""
    where.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=where.parent, prefix=".kept-")
    temporary = Path(name)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(value, stream)
        temporary.replace(where)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
