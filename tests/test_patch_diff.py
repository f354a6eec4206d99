"""Patches: what changed in a working copy, file by file: text, binary, symlinks, modes,
caches."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from bugbout.core.plumbing.trees.checkout import Checkouts
from bugbout.core.plumbing.trees.treewalk import Entry
from bugbout.core.store.race_records import ChangeArea, ChangeKind, FileChange, Patch
from bugbout.testing import RepositoryBuilder
from patch_trees import diff, round_trip, state


def test_an_unchanged_copy_has_an_empty_patch(
    trees: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def unread(self: object, *other: object) -> bytes:
        raise AssertionError("an unchanged file was read")

    monkeypatch.setattr(Entry, "content", unread)
    monkeypatch.setattr(Entry, "same_content", unread)
    patch = diff(*trees)
    assert patch == Patch()
    assert patch.empty


def test_touched_but_identical_files_are_unchanged(trees: tuple[Path, Path]) -> None:
    _, work = trees
    for name in ("README.md", "src/pkg/core.py", "src/pkg/logo.png"):
        (work / name).write_bytes((work / name).read_bytes())
    os.utime(work / "docs/index.md", ns=(1, 1))
    assert diff(*trees).empty


def test_text_edit(trees: tuple[Path, Path]) -> None:
    base, work = trees
    core = work / "src/pkg/core.py"
    core.write_text(core.read_text().replace("a - b", "b - a"))
    patch = diff(base, work)
    assert patch.files == [
        FileChange(path="src/pkg/core.py", kind=ChangeKind.MODIFIED, area=ChangeArea.SOURCE)
    ]
    assert patch.tests == patch.other == ""
    header, hunk = patch.source.split("--- a/src/pkg/core.py\n+++ b/src/pkg/core.py\n")
    assert header.startswith("diff --git a/src/pkg/core.py b/src/pkg/core.py\nindex ")
    assert header.endswith(" 100644\n")
    assert hunk == (
        "@@ -3,4 +3,4 @@\n \n \n def sub(a, b):\n-    return a - b\n+    return b - a\n"
    )


def test_the_text_diff_is_the_one_git_writes(trees: tuple[Path, Path], tmp_path: Path) -> None:
    base, work = trees
    util = work / "src/pkg/util.py"
    lines = util.read_text().splitlines(keepends=True)
    lines[3] = "CHANGED = 3\n"
    lines[30:32] = []
    lines.append("LAST = 1")
    util.write_text("".join(lines))
    ours = diff(base, work).source
    (tmp_path / "base").symlink_to(base)
    theirs = subprocess.run(
        ["git", "diff", "--no-index", "--full-index", "--no-color", "--no-ext-diff",
         "--", "base/src/pkg/util.py", "work/src/pkg/util.py"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
        env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"},
    ).stdout  # fmt: skip
    theirs = theirs.replace("a/base/", "a/").replace("b/work/", "b/")
    # Git writes the enclosing "function" after a hunk's range; the range is what counts.
    assert ours == re.sub(r"^(@@ [^@]* @@).*$", r"\1", theirs, flags=re.MULTILINE)


NEW_OID = "".join(
    subprocess.run(
        ["git", "hash-object", "--stdin"], input=b"NEW = 1\n", capture_output=True, check=True
    )
    .stdout.decode()
    .split()
)


def test_added_and_deleted_files(trees: tuple[Path, Path]) -> None:
    base, work = trees
    (work / "src/pkg/sub/new.py").write_text("NEW = 1\n")
    (work / "tests/test_new.py").write_text("def test_new():\n    pass\n")
    (work / "README.md").unlink()
    (work / "empty.txt").unlink()
    (work / "new-empty").touch()
    patch = diff(base, work)
    assert [(f.path, f.kind, f.area) for f in patch.files] == [
        ("README.md", ChangeKind.DELETED, ChangeArea.OTHER),
        ("empty.txt", ChangeKind.DELETED, ChangeArea.OTHER),
        ("new-empty", ChangeKind.ADDED, ChangeArea.OTHER),
        ("src/pkg/sub/new.py", ChangeKind.ADDED, ChangeArea.SOURCE),
        ("tests/test_new.py", ChangeKind.ADDED, ChangeArea.TEST),
    ]
    assert patch.source == (
        "diff --git a/src/pkg/sub/new.py b/src/pkg/sub/new.py\n"
        "new file mode 100644\n"
        f"index {'0' * 40}..{NEW_OID}\n"
        "--- /dev/null\n"
        "+++ b/src/pkg/sub/new.py\n"
        "@@ -0,0 +1 @@\n"
        "+NEW = 1\n"
    )
    assert "deleted file mode 100644\n" in patch.other
    assert "--- a/README.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-A package.\n" in patch.other
    # An empty file, added or deleted, has headers and no hunk.
    assert "diff --git a/new-empty b/new-empty\nnew file mode 100644\nindex " in patch.other
    assert "+++ b/new-empty" not in patch.other


def test_binary_files(
    trees: tuple[Path, Path], checkouts: Checkouts, repository: tuple[RepositoryBuilder, str]
) -> None:
    base, work = trees
    logo = work / "src/pkg/logo.png"
    logo.write_bytes(logo.read_bytes()[:100] + b"\0changed" + logo.read_bytes()[100:])
    (work / "docs/shot.png").write_bytes(bytes(range(256)) * 3)
    (work / "src/pkg/latin1.txt").write_bytes("na\xefve\n".encode("latin-1"))  # not UTF-8
    patch = diff(base, work)
    assert [(f.path, f.kind, f.binary) for f in patch.files] == [
        ("docs/shot.png", ChangeKind.ADDED, True),
        ("src/pkg/latin1.txt", ChangeKind.MODIFIED, True),
        ("src/pkg/logo.png", ChangeKind.MODIFIED, True),
    ]
    assert patch.source.count("GIT binary patch\nliteral ") == 2
    assert "new file mode 100644\nindex 0000000000000000000000000000000000000000.." in patch.other
    fresh = round_trip(patch, checkouts, repository, work.parent / "fresh")
    assert state(fresh) == state(work)


def test_binary_patches_apply_with_git_in_a_repository(
    trees: tuple[Path, Path], tmp_path: Path
) -> None:
    """Our binary patches are git's format: git itself applies them to its index."""
    base, work = trees
    (work / "src/pkg/logo.png").write_bytes(b"\0" + os.urandom(5000))
    (work / "scripts/blob").write_bytes(bytes(range(256)))
    patch = diff(base, work)
    clone = tmp_path / "clone"
    repo = RepositoryBuilder(clone)
    subprocess.run(["cp", "-a", "--no-preserve=ownership", f"{base}/.", str(clone)], check=True)
    repo.commit("base")
    for text in (patch.source, patch.other):
        (tmp_path / "p.diff").write_text(text)
        repo.git("apply", "--index", "--check", str(tmp_path / "p.diff"))
        repo.git("apply", "--index", str(tmp_path / "p.diff"))
    assert (clone / "src/pkg/logo.png").read_bytes() == (work / "src/pkg/logo.png").read_bytes()
    assert (clone / "scripts/blob").read_bytes() == bytes(range(256))


def test_symlinks(
    trees: tuple[Path, Path], checkouts: Checkouts, repository: tuple[RepositoryBuilder, str]
) -> None:
    base, work = trees
    (work / "docs/api.md").symlink_to("index.md")
    (work / "src/pkg/alias.py").unlink()
    (work / "src/pkg/alias.py").symlink_to("util.py")
    (work / "docs/old-link.md").unlink()
    (work / "docs/readme.md").unlink()
    (work / "docs/readme.md").write_text("now a file\n")
    (work / "setup.cfg").unlink()
    (work / "setup.cfg").symlink_to("README.md")
    patch = diff(base, work)
    assert [(f.path, f.kind, f.symlink) for f in patch.files] == [
        ("docs/api.md", ChangeKind.ADDED, True),
        ("docs/old-link.md", ChangeKind.DELETED, True),
        ("docs/readme.md", ChangeKind.MODIFIED, True),
        ("setup.cfg", ChangeKind.MODIFIED, True),
        ("src/pkg/alias.py", ChangeKind.MODIFIED, True),
    ]
    assert (
        "diff --git a/docs/api.md b/docs/api.md\nnew file mode 120000\n" in patch.other
        and "+index.md\n\\ No newline at end of file\n" in patch.other
    )
    assert "deleted file mode 120000\n" in patch.other
    assert "-core.py\n\\ No newline at end of file\n+util.py\n" in patch.source
    fresh = round_trip(patch, checkouts, repository, work.parent / "fresh")
    assert os.readlink(fresh / "docs/api.md") == "index.md"
    assert os.readlink(fresh / "src/pkg/alias.py") == "util.py"
    assert not (fresh / "docs/readme.md").is_symlink()
    assert state(fresh) == state(work)


def test_executable_bit(
    trees: tuple[Path, Path], checkouts: Checkouts, repository: tuple[RepositoryBuilder, str]
) -> None:
    base, work = trees
    (work / "src/pkg/core.py").chmod(0o755)
    (work / "scripts/run").chmod(0o644)
    (work / "setup.cfg").chmod(0o600)  # not a change git can see
    patch = diff(base, work)
    assert [f.path for f in patch.files] == ["scripts/run", "src/pkg/core.py"]
    assert patch.source == (
        "diff --git a/src/pkg/core.py b/src/pkg/core.py\nold mode 100644\nnew mode 100755\n"
    )
    assert patch.other == (
        "diff --git a/scripts/run b/scripts/run\nold mode 100755\nnew mode 100644\n"
    )
    fresh = round_trip(patch, checkouts, repository, work.parent / "fresh")
    assert os.access(fresh / "src/pkg/core.py", os.X_OK)
    assert not os.access(fresh / "scripts/run", os.X_OK)


def test_mode_and_content_change(trees: tuple[Path, Path]) -> None:
    base, work = trees
    script = work / "scripts/run"
    script.write_text("#!/bin/sh\necho walk\n")
    script.chmod(0o644)
    text = diff(base, work).other
    assert "old mode 100755\nnew mode 100644\nindex " in text
    assert text.split("\n")[3].endswith(tuple("0123456789abcdef"))  # no mode on the index line


CACHES = [
    "src/pkg/__pycache__/core.cpython-311.pyc",
    "tests/__pycache__/test_core.cpython-311-pytest-8.0.pyc",
    "src/pkg/stray.pyc",
    ".pytest_cache/v/cache/lastfailed",
    ".mypy_cache/3.11/pkg/core.data.json",
    ".ruff_cache/0.6.0/123",
    ".hypothesis/examples/abc",
    ".tox/py311/bin/python",
    ".nox/tests/bin/python",
    "src/pkg.egg-info/PKG-INFO",
    ".coverage",
    ".coverage.host.123.456",
    ".DS_Store",
    "docs/.DS_Store",
    ".git/HEAD",
    ".GIT/config",  # git takes .git in any case for its own: it never tracks one
    "tests/.Git/notes",
]


def test_caches_are_ignored(trees: tuple[Path, Path]) -> None:
    base, work = trees
    for name in CACHES:
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_bytes(b"\0cache")
    assert diff(base, work).empty


def test_a_file_name_that_is_not_utf8_is_kept_quoted(
    trees: tuple[Path, Path], checkouts: Checkouts, repository: tuple[RepositoryBuilder, str]
) -> None:
    """A name with bytes that are not UTF-8 is the agent's to choose: the diff quotes them
    as git does (valid UTF-8), the record escapes them, and the patch applies back to the
    same bytes, the rest of it with it."""
    base, work = trees
    (work / "src/pkg/core.py").write_text("def add(a, b):\n    return b + a\n")
    (Path(os.fsdecode(bytes(work) + b"/docs/caf\xe9 \\x41.md"))).write_text("latin-1\n")
    patch = diff(base, work)
    assert [(f.path, f.kind) for f in patch.files] == [
        ("docs/caf\udce9 \\x41.md", ChangeKind.ADDED),
        ("src/pkg/core.py", ChangeKind.MODIFIED),
    ]
    assert 'diff --git "a/docs/caf\\351 \\\\x41.md" "b/docs/caf\\351 \\\\x41.md"' in patch.other
    stored = patch.model_dump_json()
    assert "caf\\xe9 \\\\x41.md" in json.loads(stored)["files"][0]["path"]  # escaped
    fresh = round_trip(Patch.model_validate_json(stored), checkouts, repository, work.parent / "f")
    assert state(fresh) == state(work)
