"""The files of the repository the patch tests change (conftest.py's ``repository``), and
diffing, copying and reading its trees."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bugbout.core.plumbing.trees import patch as patch_module
from bugbout.core.plumbing.trees.checkout import Checkouts
from bugbout.core.plumbing.trees.patch import apply_patch, diff_trees, is_ignored
from bugbout.core.store.race_records import Patch
from bugbout.testing import RepositoryBuilder

SOURCE, TESTS = "src/pkg", "tests"
FILES = {
    "src/pkg/__init__.py": '"""pkg."""\n',
    "src/pkg/core.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
    "src/pkg/util.py": "".join(f"LINE_{n} = {n}\n" for n in range(40)),
    "src/pkg/test_inline.py": "def test_inline():\n    pass\n",
    "src/pkg/sub/mod.py": "VALUE = 1\n",
    "src/pkg/crlf.py": "a = 1\r\nb = 2\r\n",
    "src/pkg/no_newline.py": "x = 1",
    "tests/conftest.py": "import pytest\n",
    "tests/test_core.py": (
        "from pkg.core import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    ),
    "tests/data/case.json": '{"a": 1}\n',
    "docs/index.md": "# pkg\n\nSome text.\n",
    "README.md": "A package.\n",
    "setup.cfg": "[metadata]\nname = pkg\n",
    "empty.txt": "",
}


def diff(base: Path, work: Path) -> Patch:
    return diff_trees(base, work, source=SOURCE, tests=TESTS)


def fresh_copy(checkouts: Checkouts, repository: tuple[RepositoryBuilder, str], at: Path) -> Path:
    return checkouts.working_copy(repository[1], at)


def state(root: Path) -> dict[str, tuple[str, bytes]]:
    """A tree as git sees it, caches left out: mode and content (a symlink's target)."""
    found = {}
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not is_ignored(d, directory=True)]
        links = [d for d in dirs if (Path(directory) / d).is_symlink()]
        for name in files + links:
            if is_ignored(name):
                continue
            path = Path(directory) / name
            relative = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[relative] = ("120000", os.fsencode(os.readlink(path)))
            else:
                executable = path.stat().st_mode & stat.S_IXUSR
                found[relative] = ("100755" if executable else "100644", path.read_bytes())
    return found


def round_trip(
    patch: Patch, checkouts: Checkouts, repository: tuple[RepositoryBuilder, str], at: Path
) -> Path:
    fresh = fresh_copy(checkouts, repository, at)
    for text in (patch.source, patch.tests, patch.other):
        apply_patch(fresh, text)
    return fresh


def counting(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every command ``patch`` runs from now on, recorded (and run)."""
    started: list[list[str]] = []
    real = subprocess.run

    def run(argv: list[str], **options: Any) -> subprocess.CompletedProcess[bytes]:
        started.append(list(argv))
        return real(argv, **options)

    monkeypatch.setattr(patch_module.subprocess, "run", run)
    return started
