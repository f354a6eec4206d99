"""Checkouts for the race: one cached tree per commit, and a fresh copy of it per attempt.

``Checkouts.base(rev)`` extracts the tree of ``rev`` once into ``<cache>/trees/<sha>``:
what ``Git.export`` writes (``git archive``, so no ``.git`` and no history), extracted by
GNU ``tar`` when there is one. It is extracted into a temporary directory beside its final
place and renamed there when complete, under an exclusive ``flock`` per commit, so
concurrent callers (threads or processes) extract it once and never see half a tree. The
cached tree is bugbout's reference for patches: it is never handed to an agent.

``Checkouts.working_copy(rev, destination)`` gives an agent its own independent copy of
that tree. Hard links would be fast and wrong (an editor writing a file in place would
write into the cached tree and every other copy), so every file is copied: cloned where
the filesystem has reflinks (btrfs, XFS, bcachefs: copy-on-write, nothing shared once
written), else copied in the kernel (``copy_file_range``). Modes and modification times are
preserved, because ``bugbout.core.plumbing.trees.patch.diff_trees`` takes a file whose size and
mtime are the base's as unchanged; symlinks are copied as symlinks.

``Checkouts.attempt_copy(rev, root)`` is an attempt's working copy, made the best way
the machine offers (``run.checkouts``, see :func:`choose_method`): an overlay of the
cached tree (:mod:`bugbout.sandbox.overlay`), which costs the same whatever the tree's
size and whose upper directory holds exactly what the agent changed; else a copy, by
reflinks when the filesystem clones files, else in full.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bugbout.core.contract.errors import BugboutError
from bugbout.core.plumbing.trees.built_files import export_built
from bugbout.core.plumbing.trees.git import Git
from bugbout.sandbox.identity import hand_over, handed_over
from bugbout.sandbox.locking import locked
from bugbout.sandbox.overlay import Overlay, overlay_problem

Method = Literal["overlay", "reflink", "copy"]
"""How an attempt's working copy is made, best first."""

_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_FICLONE = 0x40049409
"""``ioctl`` request cloning a whole file on Linux (``FICLONE`` from ``linux/fs.h``)."""


class CheckoutError(BugboutError):
    """A checkout could not be made or removed."""


@dataclass(frozen=True)
class WorkingCopy:
    """An attempt's working copy. ``tree`` is where its processes find it; with an
    ``overlay`` it is the overlay's mount point, empty outside the namespace that mounts
    it (:func:`bugbout.sandbox.overlay.enter`), and what changed is its upper directory."""

    tree: Path
    overlay: Overlay | None = None

    @property
    def changes(self) -> Path:
        """Where the attempt's writes land: the upper directory, or the copy itself."""
        return self.overlay.upper if self.overlay is not None else self.tree


class Checkouts:
    """Cached trees of commits, and fresh working copies of them."""

    def __init__(self, git: Git, cache_dir: Path, method: str = "auto") -> None:
        self.git = git
        self.cache_dir = cache_dir
        self.trees = cache_dir / "trees"
        self._locks = cache_dir / "locks"
        self.requested = method
        """``run.checkouts``: ``auto``, or the method to use (an error if it cannot)."""
        self._method: Method | None = None

    @property
    def method(self) -> Method:
        """How attempts' working copies are made here (decided on first use)."""
        if self._method is None:
            method, problem = choose_method(self.trees, self.requested)
            if problem is not None:
                raise CheckoutError(problem)
            self._method = method
        return self._method

    def base(self, rev: str) -> Path:
        """The cached tree of ``rev``, extracted on first use. Never give it to an agent."""
        sha = rev if _FULL_SHA.fullmatch(rev) else self.git.resolve(rev)
        tree = self.trees / sha
        if tree.is_dir() and handed_over(tree):
            return tree
        self.trees.mkdir(parents=True, exist_ok=True)
        self._locks.mkdir(parents=True, exist_ok=True)
        with locked(self._locks / f"{sha}.lock"):
            if tree.is_dir():  # extracted by another caller, or before trees were handed over
                hand_over(tree)
                return tree
            for stale in self.trees.glob(f".{sha}.*"):  # left by a crashed extraction
                remove_tree(stale)
            scratch = Path(tempfile.mkdtemp(prefix=f".{sha}.", dir=self.trees))
            try:
                scratch.chmod(0o755)
                export(self.git, sha, scratch)
                hand_over(scratch)  # what confined processes write under its overlays
                scratch.rename(tree)
            except BaseException:
                remove_tree(scratch)
                raise
        return tree

    def working_copy(self, rev: str, destination: Path) -> Path:
        """A fresh, independent copy of ``rev``'s tree at ``destination``; returns it.

        ``destination`` must not exist, or be an empty directory. Editing, replacing or
        deleting anything in the copy never changes the cached tree or another copy.
        """
        source = self.base(rev)
        _check_empty(rev, destination)
        destination.parent.mkdir(parents=True, exist_ok=True)
        reflink = {"reflink": "always", "copy": "never"}.get(self.method, "auto")
        try:
            copy_tree(source, destination, reflink=reflink)
        except BaseException:
            if destination.exists() or destination.is_symlink():
                remove_tree(destination)
            raise
        return destination

    def attempt_copy(self, rev: str, root: Path, *, overlay: bool = True) -> WorkingCopy:
        """An attempt's working copy of ``rev`` at ``root/work``: an overlay when this
        machine mounts them and ``overlay`` allows it (its upper directory and the
        overlay's scratch directory beside it, in ``root``), else a copy."""
        tree = root / "work"
        if not (overlay and self.method == "overlay"):
            return WorkingCopy(self.working_copy(rev, tree))
        _check_empty(rev, tree)
        layered = Overlay(
            lower=self.base(rev).absolute(),
            upper=(root / "upper").absolute(),
            work=(root / "overlay").absolute(),
            target=tree.absolute(),
        )
        for directory in (layered.upper, layered.work, layered.target):
            directory.mkdir(parents=True, exist_ok=True)
        return WorkingCopy(tree, layered)

    def remove(self, destination: Path) -> None:
        """Delete a working copy, whatever the agent did to its permissions."""
        if not (destination.exists() or destination.is_symlink()):
            return
        if destination.is_symlink() or not destination.is_dir():
            destination.unlink()
            return
        trees = self.trees.resolve()
        target = destination.resolve()
        if target == trees or trees in target.parents or target in trees.parents:
            raise CheckoutError(f"refusing to remove {destination}: it holds cached trees")
        remove_tree(destination)


def export(git: Git, rev: str, destination: Path) -> None:
    """Write the tree of ``rev`` into the existing directory ``destination``."""
    export_built(git, rev, destination)


def choose_method(trees: Path, requested: str = "auto") -> tuple[Method, str | None]:
    """How working copies of the trees cached in ``trees`` are made, for ``run.checkouts``
    set to ``requested``: ``auto`` takes the best that works (an overlay, else reflinks,
    else a full copy); a method named that does not work here comes with why (else
    ``None``)."""
    if requested not in ("auto", "overlay", "reflink", "copy"):
        return "copy", f"run.checkouts is {requested!r}: use auto, overlay, reflink or copy"
    if requested == "copy":
        return "copy", None
    if requested in ("auto", "overlay"):
        problem = overlay_problem(trees.absolute())
        if problem is None:
            return "overlay", None
        if requested == "overlay":
            return "copy", (
                f"run.checkouts is overlay but overlays cannot be mounted here ({problem}); "
                "set run.checkouts=auto"
            )
    if _reflinks(trees.absolute()):
        return "reflink", None
    if requested == "reflink":
        return "copy", (
            f"run.checkouts is reflink but the filesystem of {trees} cannot clone files; "
            "set run.checkouts=auto"
        )
    return "copy", None


@functools.cache
def _reflinks(folder: Path) -> bool:
    """Whether files in ``folder`` can be cloned (``FICLONE``; tried once per folder)."""
    if not sys.platform.startswith("linux"):
        return False
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".reflink-probe-", dir=folder) as scratch:
        source = Path(scratch) / "source"
        source.write_bytes(b"probe")
        with source.open("rb") as src, (Path(scratch) / "clone").open("wb") as clone:
            try:
                fcntl.ioctl(clone.fileno(), _FICLONE, src.fileno())
            except OSError:
                return False
    return True


def _check_empty(rev: str, destination: Path) -> None:
    if destination.is_symlink() or (destination.exists() and not _empty_dir(destination)):
        raise CheckoutError(f"cannot check out {rev} into {destination}: it is not empty")


def copy_tree(source: Path, destination: Path, *, reflink: str = "auto") -> None:
    """Copy ``source`` to ``destination`` (which must not exist, or be an empty directory),
    preserving modes, mtimes and symlinks; files are cloned where the filesystem can
    (``reflink``: ``auto``), must be (``always``) or are never cloned (``never``)."""
    if _gnu_cp():
        result = subprocess.run(
            [
                "cp", "--recursive", "--no-dereference", "--no-target-directory",
                "--preserve=mode,timestamps", f"--reflink={reflink}", "--",
                str(source), str(destination),
            ],
            capture_output=True,
            text=True,
            check=False,
        )  # fmt: skip
        if result.returncode:
            message = (result.stderr.strip().splitlines() or ["(no message)"])[0]
            raise CheckoutError(f"cannot copy {source} to {destination}: {message}")
        return
    try:
        shutil.copytree(
            source, destination, symlinks=True, copy_function=_clone_file, dirs_exist_ok=True
        )
    except (OSError, shutil.Error) as exc:
        raise CheckoutError(f"cannot copy {source} to {destination}: {exc}") from exc


@functools.cache
def _gnu_tool(name: str, signature: str) -> bool:
    """Whether ``name --version`` runs and names ``signature`` (probed once per process)."""
    if not shutil.which(name):
        return False
    try:
        probe = subprocess.run([name, "--version"], capture_output=True, text=True, check=False)
    except OSError:
        return False
    return probe.returncode == 0 and signature in probe.stdout


def _gnu_cp() -> bool:
    """GNU ``cp``: ``--reflink=auto``, and ``copy_file_range`` when it cannot clone."""
    return sys.platform.startswith("linux") and _gnu_tool("cp", "GNU coreutils")


def _clone_file(source: str, destination: str) -> str:
    """Clone ``source`` when the filesystem supports it, else copy it; then its mode and
    times. ``shutil.copytree``'s copy function when GNU ``cp`` is not available."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError), open(source, "rb") as src:  # noqa: PTH123
            fd = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                fcntl.ioctl(fd, _FICLONE, src.fileno())
            except OSError:
                os.close(fd)
                os.unlink(destination)  # noqa: PTH108
                raise
            os.close(fd)
            shutil.copystat(source, destination)
            return destination
    return str(shutil.copy2(source, destination))


def _empty_dir(path: Path) -> bool:
    return path.is_dir() and next(path.iterdir(), None) is None


def remove_later(path: Path, beside: Path | None = None) -> threading.Thread | None:
    """Take ``path`` (a tree) out of the way at once, renamed into a hidden folder of
    ``beside`` (by default its own folder; on the same filesystem, never inside another
    tree being removed), and remove it with :func:`remove_tree` in a thread of its own
    (not a daemon: the process waits for it before it exits). The thread, or ``None``
    when there was nothing."""
    if not (path.exists() or path.is_symlink()):
        return None
    folder = path.parent if beside is None else beside
    folder.mkdir(parents=True, exist_ok=True)
    stale = [entry for entry in folder.glob(".removing-*") if not _remover_alive(entry.name)]
    aside = Path(tempfile.mkdtemp(prefix=f".removing-{os.getpid()}-{path.name}-", dir=folder))
    path.rename(aside / path.name)
    remover = threading.Thread(
        target=_remove_quietly, args=(aside, *stale), name=f"remove {path.name}"
    )
    remover.start()
    return remover


def _remover_alive(name: str) -> bool:
    """Whether the process that set aside ``.removing-<pid>-...`` is still running (a
    bugbout that died left its trees there for the next one to remove)."""
    pid = name.split("-")[1]
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_quietly(*paths: Path) -> None:
    """Remove ``paths`` in the background: one that cannot be removed is left for later,
    never a traceback in a thread."""
    for path in paths:
        with contextlib.suppress(OSError, CheckoutError):
            remove_tree(path)


def remove_tree(path: Path) -> None:
    """``shutil.rmtree`` that first gives back permissions an agent may have taken away
    (never following a link)."""
    retried: set[str] = set()

    def retry(name: str) -> None:
        target = Path(name)
        if not (target.exists() or target.is_symlink()):
            return  # already gone (a directory emptied by an earlier retry)
        if name in retried:
            raise CheckoutError(f"cannot remove {target}")
        retried.add(name)
        for directory in (target.parent, target):
            with contextlib.suppress(OSError):
                mode = directory.lstat().st_mode
                if stat.S_ISDIR(mode):
                    directory.chmod(stat.S_IMODE(mode) | stat.S_IRWXU)
        if target.is_dir() and not target.is_symlink():
            remove(target)
        else:
            target.unlink()

    def remove(root: Path) -> None:
        if sys.version_info >= (3, 12):
            shutil.rmtree(root, onexc=lambda _function, name, _exc: retry(name))
        else:
            shutil.rmtree(root, onerror=lambda _function, name, _exc: retry(name))

    remove(path)
