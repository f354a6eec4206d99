"""Checkouts: cached base trees of commits, and independent working copies of them."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from bugbout.core.plumbing.trees import checkout
from bugbout.core.plumbing.trees.checkout import CheckoutError, Checkouts
from bugbout.core.plumbing.trees.git import Git, GitError
from bugbout.testing import RepositoryBuilder

FILES = {
    "src/pkg/__init__.py": '"""pkg."""\n',
    "src/pkg/core.py": "def add(a, b):\n    return a + b\n",
    "tests/test_core.py": (
        "from pkg.core import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    ),
    "docs/index.md": "# pkg\n",
    "README.md": "A package.\n",
}


def make_repository(path: Path) -> tuple[RepositoryBuilder, str]:
    """A repository whose tip has text, binary, executable and symlinked files."""
    repo = RepositoryBuilder(path)
    repo.commit("Initial", FILES)
    (path / "data.bin").write_bytes(bytes(range(256)) * 4)
    script = path / "scripts" / "run"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho run\n")
    script.chmod(0o755)
    (path / "docs" / "readme.md").symlink_to("../README.md")
    (path / "src" / "pkg" / "core.py").write_text("def add(a, b):\n    return b + a\n")
    return repo, repo.commit("Add data, a script and a link")


@pytest.fixture
def repository(tmp_path: Path) -> tuple[RepositoryBuilder, str]:
    return make_repository(tmp_path / "repo")


@pytest.fixture
def checkouts(tmp_path: Path, repository: tuple[RepositoryBuilder, str]) -> Checkouts:
    return Checkouts(Git(repository[0].path), tmp_path / "cache")


def snapshot(root: Path) -> dict[str, tuple[str, object, int]]:
    """Every file and symlink under ``root``: kind, content or target, mode, mtime."""
    found: dict[str, tuple[str, object, int]] = {}
    for directory, dirs, files in os.walk(root):
        for name in files + [d for d in dirs if (Path(directory) / d).is_symlink()]:
            path = Path(directory) / name
            info = path.lstat()
            relative = path.relative_to(root).as_posix()
            if stat.S_ISLNK(info.st_mode):
                found[relative] = ("link", os.readlink(path), info.st_mtime_ns)
            else:
                found[relative] = (oct(info.st_mode), path.read_bytes(), info.st_mtime_ns)
    return found


def committed(repo: RepositoryBuilder, rev: str) -> dict[str, tuple[str, bytes]]:
    """Every entry of ``rev``'s tree: its git mode and its content (a symlink's target)."""
    entries = {}
    for line in repo.git("ls-tree", "-r", "-z", rev).split("\0"):
        if not line:
            continue
        meta, path = line.split("\t", 1)
        mode, _, blob = meta.split()
        content = subprocess.run(
            ["git", "-C", str(repo.path), "cat-file", "blob", blob],
            capture_output=True,
            check=True,
        ).stdout
        entries[path] = (mode, content)
    return entries


def on_disk(root: Path) -> dict[str, tuple[str, bytes]]:
    """Every file of a tree as git would record it: mode and content (a symlink's target)."""
    entries = {}
    for directory, dirs, files in os.walk(root):
        for name in files + [d for d in dirs if (Path(directory) / d).is_symlink()]:
            path = Path(directory) / name
            relative = path.relative_to(root).as_posix()
            if path.is_symlink():
                entries[relative] = ("120000", os.fsencode(os.readlink(path)))
            else:
                mode = "100755" if path.stat().st_mode & stat.S_IXUSR else "100644"
                entries[relative] = (mode, path.read_bytes())
    return entries


# -- base trees --------------------------------------------------------------------------


def test_base_is_the_commit_without_git(
    checkouts: Checkouts, repository: tuple[RepositoryBuilder, str]
) -> None:
    repo, sha = repository
    base = checkouts.base(sha)
    assert base == checkouts.cache_dir / "trees" / sha
    assert not (base / ".git").exists()
    assert on_disk(base) == committed(repo, sha)
    assert (base / "docs" / "readme.md").is_symlink()
    assert os.readlink(base / "docs" / "readme.md") == "../README.md"


def test_base_of_an_older_commit_and_a_symbolic_rev(
    checkouts: Checkouts, repository: tuple[RepositoryBuilder, str]
) -> None:
    repo, sha = repository
    parent = repo.git("rev-parse", "HEAD~1")
    assert on_disk(checkouts.base(parent)) == committed(repo, parent)
    assert checkouts.base("HEAD") == checkouts.base(sha)
    assert checkouts.base("HEAD~1").name == parent


def test_base_is_extracted_once(
    checkouts: Checkouts,
    repository: tuple[RepositoryBuilder, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = []
    real_export = checkout.export
    monkeypatch.setattr(checkout, "export", lambda *args: calls.append(args) or real_export(*args))
    _, sha = repository
    first = checkouts.base(sha)
    before = snapshot(first)
    assert checkouts.base(sha) == first
    assert Checkouts(checkouts.git, checkouts.cache_dir).base(sha) == first
    assert len(calls) == 1
    assert snapshot(first) == before
    assert sorted(p.name for p in checkouts.trees.iterdir()) == [sha]


def test_base_cleans_up_after_a_crashed_extraction(
    checkouts: Checkouts, repository: tuple[RepositoryBuilder, str]
) -> None:
    _, sha = repository
    stale = checkouts.trees / f".{sha}.crashed"
    (stale / "half").mkdir(parents=True)
    checkouts.base(sha)
    assert not stale.exists()


def test_a_failed_extraction_leaves_nothing(
    checkouts: Checkouts, monkeypatch: pytest.MonkeyPatch, repository: tuple[RepositoryBuilder, str]
) -> None:
    def broken(git: Git, rev: str, destination: Path) -> None:
        (destination / "partial.py").write_text("half")
        raise GitError("disk full")

    monkeypatch.setattr(checkout, "export", broken)
    with pytest.raises(GitError, match="disk full"):
        checkouts.base(repository[1])
    assert list(checkouts.trees.iterdir()) == []


def test_base_of_an_unknown_rev(checkouts: Checkouts) -> None:
    with pytest.raises(GitError, match="not a branch or commit"):
        checkouts.base("no-such-branch")
    with pytest.raises(GitError):
        checkouts.base("0" * 40)
    assert list(checkouts.trees.iterdir()) == []


def test_concurrent_base_calls_in_threads(
    checkouts: Checkouts,
    repository: tuple[RepositoryBuilder, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo, sha = repository
    calls = []
    real_export = checkout.export
    monkeypatch.setattr(checkout, "export", lambda *args: calls.append(args) or real_export(*args))
    start = threading.Barrier(8)
    results: list[Path] = []
    errors: list[BaseException] = []

    def call() -> None:
        start.wait()
        try:
            results.append(checkouts.base(sha))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert results == [checkouts.trees / sha] * 8
    assert len(calls) == 1
    assert on_disk(results[0]) == committed(repo, sha)


def test_concurrent_base_calls_in_processes(
    tmp_path: Path, repository: tuple[RepositoryBuilder, str]
) -> None:
    repo, sha = repository
    cache = tmp_path / "shared-cache"
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from bugbout.core.plumbing.trees.checkout import Checkouts\n"
        "from bugbout.core.plumbing.trees.git import Git\n"
        "print(Checkouts(Git(Path(sys.argv[1])), Path(sys.argv[2])).base(sys.argv[3]))\n"
    )
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(repo.path), str(cache), sha],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    outputs = [process.communicate() for process in processes]
    assert [process.returncode for process in processes] == [0] * 4, outputs
    assert {stdout.strip() for stdout, _ in outputs} == {str(cache / "trees" / sha)}
    assert on_disk(cache / "trees" / sha) == committed(repo, sha)
    assert [p.name for p in (cache / "trees").iterdir()] == [sha]


# -- working copies ----------------------------------------------------------------------


def test_working_copy_is_the_base(
    tmp_path: Path, checkouts: Checkouts, repository: tuple[RepositoryBuilder, str]
) -> None:
    repo, sha = repository
    work = checkouts.working_copy(sha, tmp_path / "attempt" / "work")
    assert work == tmp_path / "attempt" / "work"
    assert snapshot(work) == snapshot(checkouts.base(sha))  # modes and mtimes included
    assert on_disk(work) == committed(repo, sha)
    assert os.readlink(work / "docs" / "readme.md") == "../README.md"
    assert os.access(work / "scripts" / "run", os.X_OK)
    for path in (work / "src" / "pkg" / "core.py", work / "data.bin"):
        info = path.stat()
        assert info.st_nlink == 1  # copies, never hard links to the base
        assert info.st_ino != (checkouts.base(sha) / path.relative_to(work)).stat().st_ino


def test_edits_in_a_working_copy_never_reach_the_base_or_another_copy(
    tmp_path: Path, checkouts: Checkouts, repository: tuple[RepositoryBuilder, str]
) -> None:
    _, sha = repository
    base = checkouts.base(sha)
    pristine = snapshot(base)
    first = checkouts.working_copy(sha, tmp_path / "one")
    second = checkouts.working_copy(sha, tmp_path / "two")
    # In place: the same inode, rewritten, truncated, appended to.
    with (first / "src" / "pkg" / "core.py").open("r+b") as handle:
        handle.write(b"DEF")
    with (first / "README.md").open("w") as handle:
        handle.write("rewritten\n")
    with (first / "data.bin").open("ab") as handle:
        handle.write(b"\0more")
    os.truncate(first / "docs" / "index.md", 0)
    (first / "scripts" / "run").chmod(0o644)
    os.utime(first / "tests" / "test_core.py", ns=(0, 0))
    (first / "docs" / "readme.md").unlink()
    (first / "src" / "pkg" / "new.py").write_text("new\n")
    (first / "tests" / "test_core.py").unlink()
    assert snapshot(base) == pristine
    assert snapshot(second) == pristine
    assert checkouts.base(sha) == base


def test_working_copy_destination_must_be_new_or_empty(
    tmp_path: Path, checkouts: Checkouts, repository: tuple[RepositoryBuilder, str]
) -> None:
    _, sha = repository
    empty = tmp_path / "empty"
    empty.mkdir()
    checkouts.working_copy(sha, empty)
    assert (empty / "README.md").read_text() == "A package.\n"
    with pytest.raises(CheckoutError, match="not empty"):
        checkouts.working_copy(sha, empty)
    (tmp_path / "file").write_text("x")
    with pytest.raises(CheckoutError, match="not empty"):
        checkouts.working_copy(sha, tmp_path / "file")


def test_working_copy_without_gnu_tools(
    tmp_path: Path,
    checkouts: Checkouts,
    repository: tuple[RepositoryBuilder, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The portable path: shutil's copy (cloning files where the filesystem can)."""
    monkeypatch.setattr(checkout, "_gnu_cp", lambda: False)
    repo, sha = repository
    work = checkouts.working_copy(sha, tmp_path / "work")
    assert on_disk(checkouts.base(sha)) == committed(repo, sha)
    assert snapshot(work) == snapshot(checkouts.base(sha))
    (work / "README.md").write_text("changed\n")
    assert (checkouts.base(sha) / "README.md").read_text() == "A package.\n"


def test_remove_a_working_copy_an_agent_locked_down(
    tmp_path: Path, checkouts: Checkouts, repository: tuple[RepositoryBuilder, str]
) -> None:
    _, sha = repository
    work = checkouts.working_copy(sha, tmp_path / "work")
    (work / "src" / "pkg" / "core.py").chmod(0o400)
    (work / "src" / "pkg").chmod(0o500)
    (work / "docs").chmod(0o000)
    checkouts.remove(work)
    assert not work.exists()
    checkouts.remove(work)  # already gone: nothing to do
    assert (checkouts.base(sha) / "src" / "pkg" / "core.py").exists()


def test_remove_refuses_the_cache(
    checkouts: Checkouts, repository: tuple[RepositoryBuilder, str]
) -> None:
    base = checkouts.base(repository[1])
    for target in (base, checkouts.trees, checkouts.cache_dir):
        with pytest.raises(CheckoutError, match="cached trees"):
            checkouts.remove(target)
    assert (base / "README.md").exists()


def test_export_ignores_export_attributes(tmp_path: Path) -> None:
    """``export-ignore`` (some projects mark ``tests/``) and ``export-subst`` must not change
    the tree the tests and agents see."""
    repo = RepositoryBuilder(tmp_path / "repo")
    sha = repo.commit(
        "Initial",
        {
            ".gitattributes": "tests export-ignore\nversion.txt export-subst\n",
            "tests/test_a.py": "def test_a():\n    pass\n",
            "version.txt": "$Format:%H$\n",
        },
    )
    checkouts = Checkouts(Git(repo.path), tmp_path / "cache")
    base = checkouts.base(sha)
    assert (base / "tests" / "test_a.py").exists()
    assert (base / "version.txt").read_text() == "$Format:%H$\n"
