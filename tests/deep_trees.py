"""Directory chains deeper than a path may be long: built through descriptors, and any
tree taken down in steps of short paths (``shutil.rmtree`` recurses once per level, past
Python's limit)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

STEP = 100
"""Levels gone down at most before the rest is moved up under the root."""


def nest(root: Path, depth: int) -> None:
    """``depth`` directories ``d`` inside each other in ``root``, and a file at the bottom."""
    fd = os.open(root, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(os.open("bottom.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    os.close(fd)


def remove_tree(root: Path) -> None:
    """Remove ``root`` and everything in it, however deep: a directory ``STEP`` levels
    down is moved up under ``root`` first, so no path used is long."""
    while root.is_dir():
        current, depth = root, 0
        while depth < STEP:
            below = next((e for e in os.scandir(current) if e.is_dir(follow_symlinks=False)), None)
            if below is None:
                break
            current, depth = Path(below.path), depth + 1
        if depth == STEP:
            current.rename(root / uuid.uuid4().hex)
            continue
        for entry in os.scandir(current):
            os.unlink(entry.path)
        current.rmdir()
