"""Overlay working copies: the upper directory is the patch, read without walking the
tree, and it gives the patch a copy gives for the same edits; else reflinks or copies."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from bugbout.core.contract.settings import LimitsSettings
from bugbout.core.plumbing.trees import checkout
from bugbout.core.plumbing.trees.checkout import (
    CheckoutError,
    Checkouts,
    WorkingCopy,
    choose_method,
)
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.plumbing.trees.patch import apply_patch, diff_trees
from bugbout.core.plumbing.trees.treewalk import walk_upper
from bugbout.core.store.race_records import Patch
from bugbout.sandbox.overlay import enter, overlay_problem
from bugbout.testing import RepositoryBuilder

FILES = {
    "src/pkg/__init__.py": '"""pkg."""\n',
    "src/pkg/core.py": "def add(a, b):\n    return a + b\n",
    "src/pkg/old.py": "OLD = 1\n",
    "src/pkg/mode.py": "MODE = 1\n",
    "src/pkg/sub/a.py": "A = 1\n",
    "src/pkg/sub/b.py": "B = 1\n",
    "src/pkg/gone/x.py": "X = 1\n",
    "src/pkg/gone/deep/y.py": "Y = 1\n",
    "src/pkg/tofile/t.py": "T = 1\n",
    "tests/test_core.py": "def test_add():\n    pass\n",
    "README.md": "A package.\n",
}

EDITS = """
set -e
printf 'def add(a, b):\\n    return b + a\\n' > src/pkg/core.py
printf 'NEW = 1\\n' > src/pkg/new.py
rm src/pkg/old.py
mv src/pkg/sub/a.py src/pkg/renamed.py
chmod +x src/pkg/mode.py
mkdir empty
rm -r src/pkg/gone
rm -r src/pkg/sub
mkdir src/pkg/sub
printf 'C = 1\\n' > src/pkg/sub/c.py
touch README.md
rm -r src/pkg/tofile
printf 'T = 2\\n' > src/pkg/tofile
rm tests/test_core.py
mkdir tests/test_core.py
printf 'Z = 1\\n' > tests/test_core.py/z.py
"""
"""Every kind of change: edit, add, delete, rename, chmod, a new empty directory (not
part of a patch), a deleted directory, a directory deleted and made again (opaque), a
file touched without a change, a directory become a file and a file a directory."""

OVERLAY = overlay_problem(Path("/tmp").resolve())
needs_overlay = pytest.mark.skipif(
    OVERLAY is not None, reason=f"overlays cannot be mounted here: {OVERLAY}"
)


@pytest.fixture
def repository(tmp_path: Path) -> tuple[RepositoryBuilder, str]:
    repo = RepositoryBuilder(tmp_path / "repo")
    return repo, repo.commit("Initial", FILES)


def checkouts_of(repository: tuple[RepositoryBuilder, str], cache: Path, method: str) -> Checkouts:
    return Checkouts(Git(repository[0].path), cache, method)


def edit(copy: WorkingCopy, script: str = EDITS) -> None:
    """Run ``script`` in the working copy, inside its overlay's namespace if it has one."""
    argv = ["sh", "-c", script]
    if copy.overlay is not None:
        argv = enter(copy.overlay, argv)
    subprocess.run(argv, cwd=copy.tree, check=True, capture_output=True)


def patch_of(checkouts: Checkouts, rev: str, copy: WorkingCopy) -> Patch:
    return diff_trees(
        checkouts.base(rev), copy.changes, source="src/pkg", tests="tests",
        upper=copy.overlay is not None,
    )  # fmt: skip


def listing(root: Path) -> dict[str, str]:
    """Every entry under ``root``: its kind (a whiteout is ``whiteout``)."""
    found = {}
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(directory) / name
            info = path.lstat()
            if stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:
                kind = "whiteout"
            elif stat.S_ISDIR(info.st_mode):
                kind = "dir"
            else:
                kind = "file"
            found[path.relative_to(root).as_posix()] = kind
    return found


@needs_overlay
def test_the_upper_directory_holds_exactly_the_changes(
    tmp_path: Path, repository: tuple[RepositoryBuilder, str]
) -> None:
    checkouts = checkouts_of(repository, tmp_path / "cache", "overlay")
    copy = checkouts.attempt_copy(repository[1], tmp_path / "attempt")
    assert copy.overlay is not None
    assert list(copy.tree.iterdir()) == []  # outside the namespace: only the mount point
    edit(copy)
    assert listing(copy.changes) == {
        "README.md": "file",
        "empty": "dir",
        "src": "dir",
        "src/pkg": "dir",
        "src/pkg/core.py": "file",
        "src/pkg/new.py": "file",
        "src/pkg/old.py": "whiteout",
        "src/pkg/renamed.py": "file",
        "src/pkg/mode.py": "file",
        "src/pkg/gone": "whiteout",
        "src/pkg/sub": "dir",
        "src/pkg/sub/c.py": "file",
        "src/pkg/tofile": "file",
        "tests": "dir",
        "tests/test_core.py": "dir",
        "tests/test_core.py/z.py": "file",
    }
    assert checkouts.base(repository[1]).joinpath("src/pkg/old.py").exists()  # never written


@pytest.mark.parametrize("method", ["overlay", "reflink", "copy"])
def test_every_method_gives_the_patch_a_copy_gives(
    tmp_path: Path, repository: tuple[RepositoryBuilder, str], method: str
) -> None:
    trees = tmp_path / "cache" / "trees"
    chosen, problem = choose_method(trees, method)
    if problem is not None:
        pytest.skip(problem)
    reference = checkouts_of(repository, tmp_path / "reference", "copy")
    copied = reference.attempt_copy(repository[1], tmp_path / "copied")
    edit(copied)
    expected = patch_of(reference, repository[1], copied)

    checkouts = checkouts_of(repository, tmp_path / "cache", method)
    copy = checkouts.attempt_copy(repository[1], tmp_path / "attempt")
    assert (copy.overlay is not None) == (chosen == "overlay")
    edit(copy)
    patch = patch_of(checkouts, repository[1], copy)
    assert patch == expected
    assert {(change.path, change.kind) for change in patch.files} == {
        ("src/pkg/core.py", "modified"),
        ("src/pkg/new.py", "added"),
        ("src/pkg/old.py", "deleted"),
        ("src/pkg/sub/a.py", "deleted"),
        ("src/pkg/sub/b.py", "deleted"),
        ("src/pkg/sub/c.py", "added"),
        ("src/pkg/renamed.py", "added"),
        ("src/pkg/mode.py", "modified"),
        ("src/pkg/gone/x.py", "deleted"),
        ("src/pkg/gone/deep/y.py", "deleted"),
        ("src/pkg/tofile/t.py", "deleted"),
        ("src/pkg/tofile", "added"),
        ("tests/test_core.py", "deleted"),
        ("tests/test_core.py/z.py", "added"),
    }
    applied = reference.working_copy(repository[1], tmp_path / "applied")
    apply_patch(applied, patch.source)
    assert (applied / "src/pkg/sub/c.py").read_text() == "C = 1\n"
    assert not (applied / "src/pkg/gone").exists()
    assert os.access(applied / "src/pkg/mode.py", os.X_OK)


@needs_overlay
def test_hostile_entries_in_the_upper_directory_are_read_as_a_copy_reads_them(
    tmp_path: Path, repository: tuple[RepositoryBuilder, str]
) -> None:
    """Symlinks (out of the tree, to a directory, over a base file) are recorded as
    symlinks and never followed; a FIFO replacing a file deletes it."""
    script = (
        "set -e; ln -s /etc/passwd src/pkg/passwd; rm src/pkg/core.py; "
        "ln -s /etc src/pkg/core.py; ln -s / src/pkg/root; mkfifo src/pkg/__init__.py.fifo; "
        "rm src/pkg/__init__.py; mkfifo src/pkg/__init__.py"
    )
    reference = checkouts_of(repository, tmp_path / "reference", "copy")
    copied = reference.attempt_copy(repository[1], tmp_path / "copied")
    edit(copied, script)
    checkouts = checkouts_of(repository, tmp_path / "cache", "overlay")
    copy = checkouts.attempt_copy(repository[1], tmp_path / "attempt")
    edit(copy, script)
    patch = patch_of(checkouts, repository[1], copy)
    assert patch == patch_of(reference, repository[1], copied)
    assert {(c.path, c.kind, c.symlink) for c in patch.files} == {
        ("src/pkg/passwd", "added", True),
        ("src/pkg/core.py", "modified", True),
        ("src/pkg/root", "added", True),
        ("src/pkg/__init__.py", "deleted", False),
    }


@pytest.mark.parametrize("attribute", ["user.overlay.opaque", "trusted.overlay.opaque"])
def test_an_opaque_directory_hides_the_base_directory(tmp_path: Path, attribute: str) -> None:
    """A privileged mount marks opaque directories in ``trusted.``, an unprivileged one in
    ``user.``: both hide every file of the base's directory."""
    base, upper = tmp_path / "base", tmp_path / "upper"
    for path in ("pkg/keep.py", "pkg/dir/a.py", "pkg/dir/sub/b.py", "pkg/gone.py"):
        (base / path).parent.mkdir(parents=True, exist_ok=True)
        (base / path).write_text(path)
    (upper / "pkg/dir").mkdir(parents=True)
    (upper / "pkg/dir/c.py").write_text("c")
    try:
        os.setxattr(upper / "pkg/dir", attribute, b"y")
        os.mknod(upper / "pkg/gone.py", stat.S_IFCHR | 0o000, os.makedev(0, 0))
    except PermissionError:
        pytest.skip(f"cannot write {attribute} or a whiteout here")
    walked = [
        (path, old is not None, new is not None)
        for path, old, new in walk_upper(base, upper, files=100, ignored=lambda *_a, **_k: False)
    ]
    assert walked == [
        ("pkg/dir/a.py", True, False),
        ("pkg/dir/c.py", False, True),
        ("pkg/dir/sub/b.py", True, False),
        ("pkg/gone.py", True, False),
    ]


@needs_overlay
def test_reading_an_overlay_patch_never_lists_unchanged_directories(
    tmp_path: Path, repository: tuple[RepositoryBuilder, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    checkouts = checkouts_of(repository, tmp_path / "cache", "overlay")
    copy = checkouts.attempt_copy(repository[1], tmp_path / "attempt")
    edit(copy, "printf 'X = 2\\n' > src/pkg/new.py")
    listed: list[str] = []
    scandir = os.scandir

    def spy(path: str) -> object:
        listed.append(os.path.relpath(path, checkouts.base(repository[1])))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", spy)
    patch_of(checkouts, repository[1], copy)
    assert not any(entry.startswith(("tests", "src/pkg/sub", "src/pkg/gone")) for entry in listed)


def test_a_forced_method_is_used_and_the_fallback_is_chosen_without_overlays(
    tmp_path: Path, repository: tuple[RepositoryBuilder, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = checkouts_of(repository, tmp_path / "a", "copy").attempt_copy(
        repository[1], tmp_path / "copy"
    )
    assert copy.overlay is None and (copy.tree / "src/pkg/core.py").is_file()
    monkeypatch.setattr(checkout, "overlay_problem", lambda _trees: "no overlays here")
    fallback, problem = choose_method(tmp_path / "b", "auto")
    assert problem is None and fallback in ("reflink", "copy")
    assert (
        checkouts_of(repository, tmp_path / "c", "auto")
        .attempt_copy(repository[1], tmp_path / "auto")
        .overlay
        is None
    )
    with pytest.raises(CheckoutError, match=r"run\.checkouts is overlay.*no overlays here"):
        checkouts_of(repository, tmp_path / "d", "overlay").attempt_copy(
            repository[1], tmp_path / "forced"
        )


@needs_overlay
def test_an_overlay_patch_is_held_to_the_files_limit(
    tmp_path: Path, repository: tuple[RepositoryBuilder, str]
) -> None:
    from bugbout.core.plumbing.confinement.limits import LimitExceeded

    checkouts = checkouts_of(repository, tmp_path / "cache", "overlay")
    copy = checkouts.attempt_copy(repository[1], tmp_path / "attempt")
    edit(copy, "mkdir many && cd many && for i in $(seq 50); do : > f$i; done")
    with pytest.raises(LimitExceeded, match="files"):
        diff_trees(
            checkouts.base(repository[1]), copy.changes, source="src/pkg", tests="tests",
            limits=LimitsSettings(files=20), upper=True,
        )  # fmt: skip
