"""A test run's tree: the cached tree of a commit under an overlay, with bugbout's own
edits (a patch, test modules, canaries) written into the overlay's upper directory.

A test run on a patch used to copy the whole tree, then change a few files. Here, when
the machine mounts overlays (:func:`bugbout.core.plumbing.trees.checkout.choose_method`), nothing is
copied: bugbout edits ``edits`` (the upper directory) from the host, and pytest runs where
the overlay is mounted (:func:`bugbout.sandbox.overlay.enter`), seeing the cached tree
with the edits on top. Without overlays ``edits`` is a full copy (reflinks where the
filesystem clones files), as before.

The upper directory starts empty, so a file must be *exposed* before it is edited:
:meth:`TestTree.expose` copies a path's directories and the file itself up from the cached
tree (a symlink as a symlink, so the checks against links still see it). Once the edits
are done, :meth:`TestTree.seal` turns every exposed path that they deleted into a
whiteout (a character device 0/0, which an unprivileged process may create), so the
overlay hides it too.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from bugbout.core.plumbing.trees.checkout import Checkouts, WorkingCopy, copy_tree, remove_tree
from bugbout.sandbox.overlay import Overlay, is_whiteout


@dataclass
class TestTree:
    """Where a test run happens (``tree``) and where bugbout edits it (``edits``)."""

    __test__ = False  # not a pytest test class

    copy: WorkingCopy
    lower: Path
    """The cached tree of the commit (never written)."""
    exposed: set[str] = field(default_factory=set)

    @property
    def tree(self) -> Path:
        """Where pytest finds the tree (the overlay's mount point, or the copy)."""
        return self.copy.tree

    @property
    def edits(self) -> Path:
        """Where bugbout writes its changes before the run (the upper directory, or the
        copy)."""
        return self.copy.changes

    @property
    def overlay(self) -> Overlay | None:
        return self.copy.overlay

    def locate(self, name: str) -> Path:
        """Where the run finds ``name`` (a path relative to the tree), as the host reads
        it: among the edits when they hold it (a whiteout there: it was deleted), else in
        the cached tree."""
        edited = self.edits / name
        if self.overlay is None or os.path.lexists(edited):
            return edited
        return self.lower / name

    def expose(self, paths: list[str] | set[str] | tuple[str, ...]) -> None:
        """Make each of ``paths`` (relative, ``/``-separated) read and edit in ``edits`` as
        it would in a copy: its directories made, the file copied up. A path that goes
        through a symlink, or does not exist, is exposed as far as it exists."""
        if self.overlay is None:
            return
        for path in paths:
            parts = PurePosixPath(path).parts
            if not parts or PurePosixPath(path).is_absolute() or ".." in parts:
                continue
            self._copy_up(parts)
            self.exposed.add(str(PurePosixPath(*parts)))

    def _copy_up(self, parts: tuple[str, ...]) -> None:
        lower, upper = self.lower, self.edits
        for depth, part in enumerate(parts, 1):
            lower, upper = lower / part, upper / part
            if upper.is_dir() and not upper.is_symlink():
                continue
            if os.path.lexists(upper) or str(PurePosixPath(*parts[:depth])) in self.exposed:
                return  # already edited (an exposed path that is gone was deleted)
            try:
                info = lower.lstat()
            except OSError:
                return  # a new path: nothing to copy
            if stat.S_ISDIR(info.st_mode):
                upper.mkdir()
                shutil.copystat(lower, upper)
            elif stat.S_ISLNK(info.st_mode):
                upper.symlink_to(lower.readlink())
                return
            else:
                if stat.S_ISREG(info.st_mode):
                    shutil.copy2(lower, upper)
                return

    def seal(self) -> None:
        """Hide from the overlay every exposed path that the edits deleted (a whiteout),
        remaking the directories that ``git apply`` removed as it emptied them; one that
        the deletions left empty in the merged tree is hidden whole, as in a copy."""
        if self.overlay is None:
            return
        remade: list[Path] = []
        for path in sorted(self.exposed):
            lower, upper = self.lower, self.edits
            for part in PurePosixPath(path).parts:
                lower, upper = lower / part, upper / part
                if os.path.lexists(upper):
                    if upper.is_dir() and not upper.is_symlink():
                        continue
                    break
                if lower.is_dir() and not lower.is_symlink() and part != PurePosixPath(path).name:
                    upper.mkdir()
                    shutil.copystat(lower, upper)
                    remade.append(upper)
                    continue
                if os.path.lexists(lower):
                    os.mknod(upper, stat.S_IFCHR | 0o600, 0)
                break
        for directory in sorted(remade, key=lambda path: len(path.parts), reverse=True):
            if self._emptied(directory):
                remove_tree(directory)
                os.mknod(directory, stat.S_IFCHR | 0o600, 0)

    def _emptied(self, upper: Path) -> bool:
        """Whether a directory of the upper directory hides everything below it."""
        lower = self.lower / upper.relative_to(self.edits)
        names = {entry.name for entry in os.scandir(upper)}
        if any(not is_whiteout(upper / name) for name in names):
            return False
        return all(entry.name in names for entry in os.scandir(lower))

    def materialise(self) -> None:
        """Make the tree a plain copy: the cached tree with the edits applied (for a
        command that cannot run inside the overlay's namespace, such as a container)."""
        overlay = self.overlay
        if overlay is None:
            return
        self.seal()
        copy_tree(self.lower, overlay.target)
        _replay(overlay.upper, overlay.target)
        self.copy = WorkingCopy(overlay.target)


def fresh_test_tree(checkouts: Checkouts, rev: str, root: Path) -> TestTree:
    """A new test tree of ``rev`` in ``root`` (absent or empty; remove it with
    ``checkouts.remove(root)``): an overlay when the machine mounts them, else a copy at
    ``root/work``."""
    return TestTree(checkouts.attempt_copy(rev, root), checkouts.base(rev).absolute())


def _replay(upper: Path, tree: Path) -> None:
    """Apply an upper directory's entries to ``tree``: whiteouts delete, directories
    merge, anything else replaces."""
    for entry in os.scandir(upper):
        source, target = Path(entry.path), tree / entry.name
        if is_whiteout(source):
            _remove(target)
        elif entry.is_dir(follow_symlinks=False):
            if os.path.lexists(target) and not (target.is_dir() and not target.is_symlink()):
                _remove(target)
            if not target.exists():
                target.mkdir()
            shutil.copystat(source, target)
            _replay(source, target)
        else:
            _remove(target)
            if entry.is_symlink():
                target.symlink_to(source.readlink())
            elif entry.is_file(follow_symlinks=False):
                shutil.copy2(source, target)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        remove_tree(path)
    elif os.path.lexists(path):
        path.unlink()
