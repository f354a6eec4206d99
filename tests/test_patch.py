"""Patches: what changed in a working copy, split by area, and applying it back."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import tracemalloc
from pathlib import Path

import pytest

from bugbout.core.contract.settings import LimitsSettings
from bugbout.core.plumbing import treewalk
from bugbout.core.plumbing.checkout import Checkouts
from bugbout.core.plumbing.git import Git
from bugbout.core.plumbing.limits import LimitExceeded
from bugbout.core.plumbing.patch import PatchError, apply_patch, classify, diff_trees, is_ignored
from bugbout.core.plumbing.treewalk import Entry
from bugbout.core.store.records import ChangeArea, ChangeKind, FileChange, Patch
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


@pytest.fixture
def repository(tmp_path: Path) -> tuple[RepositoryBuilder, str]:
    path = tmp_path / "repo"
    repo = RepositoryBuilder(path)
    repo.write(FILES)
    (path / "src/pkg/logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0" + bytes(range(256)) * 8)
    (path / "src/pkg/latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    script = path / "scripts/run"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho run\n")
    script.chmod(0o755)
    (path / "docs/readme.md").symlink_to("../README.md")
    (path / "docs/old-link.md").symlink_to("index.md")
    (path / "src/pkg/alias.py").symlink_to("core.py")
    return repo, repo.commit("Initial")


@pytest.fixture
def checkouts(tmp_path: Path, repository: tuple[RepositoryBuilder, str]) -> Checkouts:
    return Checkouts(Git(repository[0].path), tmp_path / "cache")


@pytest.fixture
def trees(
    tmp_path: Path, checkouts: Checkouts, repository: tuple[RepositoryBuilder, str]
) -> tuple[Path, Path]:
    """The base tree and a working copy of it."""
    sha = repository[1]
    return checkouts.base(sha), checkouts.working_copy(sha, tmp_path / "work")


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


# -- finding changes ---------------------------------------------------------------------


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
    subprocess.run(["cp", "-a", f"{base}/.", str(clone)], check=True)
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
]


def test_caches_are_ignored(trees: tuple[Path, Path]) -> None:
    base, work = trees
    for name in CACHES:
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_bytes(b"\0cache")
    assert diff(base, work).empty


@pytest.mark.parametrize(
    ("path", "area"),
    [
        ("src/pkg/core.py", ChangeArea.SOURCE),
        ("src/pkg/sub/mod.py", ChangeArea.SOURCE),
        ("src/pkg/data/table.json", ChangeArea.SOURCE),
        ("src/pkg/test_inline.py", ChangeArea.TEST),
        ("src/pkg/sub/core_test.py", ChangeArea.TEST),
        ("src/pkg/conftest.py", ChangeArea.TEST),
        ("conftest.py", ChangeArea.TEST),
        ("tests/conftest.py", ChangeArea.TEST),
        ("tests/test_core.py", ChangeArea.TEST),
        ("tests/helpers.py", ChangeArea.TEST),
        ("tests/data/case.json", ChangeArea.TEST),
        ("test_top.py", ChangeArea.TEST),
        ("scripts/check_test.py", ChangeArea.TEST),
        ("README.md", ChangeArea.OTHER),
        ("setup.cfg", ChangeArea.OTHER),
        ("src/pkgextra/core.py", ChangeArea.OTHER),
        ("src/pkg", ChangeArea.OTHER),
        ("testsuite/x.py", ChangeArea.OTHER),
        ("docs/testing.md", ChangeArea.OTHER),
    ],
)
def test_classify(path: str, area: ChangeArea) -> None:
    assert classify(path, source=SOURCE, tests=TESTS) == area


def test_a_file_name_that_is_not_utf8(trees: tuple[Path, Path]) -> None:
    base, work = trees
    (Path(os.fsdecode(bytes(work) + b"/docs/caf\xe9.md"))).write_text("latin-1 name\n")
    with pytest.raises(PatchError, match="not valid UTF-8"):
        diff(base, work)


def test_areas_split_the_patch(trees: tuple[Path, Path]) -> None:
    base, work = trees
    (work / "src/pkg/core.py").write_text("changed\n")
    (work / "src/pkg/test_inline.py").write_text("def test_inline():\n    assert 1\n")
    (work / "src/pkg/sub/conftest.py").write_text("import pytest\n")
    (work / "tests/conftest.py").unlink()
    (work / "tests/data/case.json").write_text("{}\n")
    (work / "setup.cfg").write_text("[metadata]\n")
    patch = diff(base, work)
    assert {f.path: f.area for f in patch.files} == {
        "setup.cfg": ChangeArea.OTHER,
        "src/pkg/core.py": ChangeArea.SOURCE,
        "src/pkg/sub/conftest.py": ChangeArea.TEST,
        "src/pkg/test_inline.py": ChangeArea.TEST,
        "tests/conftest.py": ChangeArea.TEST,
        "tests/data/case.json": ChangeArea.TEST,
    }
    assert [f.path for f in patch.area(ChangeArea.SOURCE)] == ["src/pkg/core.py"]
    assert patch.source.count("diff --git ") == 1
    assert patch.tests.count("diff --git ") == 4
    assert patch.other.count("diff --git ") == 1
    assert "a/src/pkg/test_inline.py" in patch.tests and "test_inline" not in patch.source


# -- the round trip ------------------------------------------------------------------------


def edit_everything(work: Path) -> None:
    """Every kind of change an agent can make, caches included."""
    core = work / "src/pkg/core.py"
    core.write_text(core.read_text().replace("a + b", "a + b  # fixed") + "\n\nX = 1")
    util = work / "src/pkg/util.py"
    util.write_text("HEAD = 0\n" + util.read_text().replace("LINE_20 = 20\n", ""))
    (work / "src/pkg/crlf.py").write_bytes(b"a = 1\r\nb = 3\r\nc = 4")
    (work / "src/pkg/no_newline.py").write_text("x = 2\n")
    (work / "src/pkg/sub/mod.py").unlink()  # its directory is left empty
    (work / "src/pkg/fresh/deep/er").mkdir(parents=True)
    (work / "src/pkg/fresh/deep/er/new.py").write_text("Ünïcode = 'é'\n")
    (work / "src/pkg/with space.py").write_text("s = ' '\n")
    (work / 'src/pkg/we"ird\tname.txt').write_text("odd\n")
    (work / "src/pkg/ünï.py").write_text("u = 1\n")
    (work / "docs/x b").mkdir()
    (work / "docs/x b/y b.md").write_text("a name that looks like two\n")
    (work / "docs/trailing ").write_text("space\n")
    (work / "docs/back\\slash").write_text("backslash\n")
    (work / "src/pkg/form\x0cfeed.txt").write_text("line\u2028separator\x0b\n")
    (work / "src/pkg/logo.png").write_bytes(b"\0" + os.urandom(3000))
    (work / "src/pkg/latin1.txt").unlink()
    (work / "src/pkg/alias.py").unlink()
    (work / "src/pkg/alias.py").symlink_to("util.py")
    (work / "src/pkg/core.py").chmod(0o755)
    (work / "scripts/run").chmod(0o644)
    (work / "scripts/run2").symlink_to("run")
    (work / "tests/test_core.py").write_text("def test_more():\n    pass\n")
    (work / "tests/data/case.json").unlink()
    (work / "tests/data/case.json").mkdir()  # a file became a directory
    (work / "tests/data/case.json/inner.json").write_text("{}\n")
    (work / "tests/data/blob.bin").write_bytes(bytes(range(256)))
    (work / "docs/readme.md").unlink()
    (work / "docs/readme.md").mkdir()  # a symlink became a directory
    (work / "docs/readme.md/index.md").write_text("# readme\n")
    (work / "docs/old-link.md").unlink()
    (work / "docs/old-link.md").write_text("a file now\n")
    (work / "README.md").write_text("")
    (work / "empty.txt").write_text("not empty\n")
    (work / "setup.cfg").unlink()
    (work / "new-empty").touch()
    (work / "src/pkg/__pycache__").mkdir()
    (work / "src/pkg/__pycache__/core.cpython-311.pyc").write_bytes(b"\0\0")
    (work / ".pytest_cache").mkdir()
    (work / ".pytest_cache/README.md").write_text("cache\n")


def test_round_trip_reproduces_the_working_copy(
    trees: tuple[Path, Path], checkouts: Checkouts, repository: tuple[RepositoryBuilder, str]
) -> None:
    base, work = trees
    edit_everything(work)
    patch = diff(base, work)
    assert len(patch.files) == 29
    fresh = round_trip(patch, checkouts, repository, work.parent / "fresh")
    assert state(fresh) == state(work)
    assert state(fresh) != state(base)
    # The patch survives the store: JSON and back.
    reloaded = Patch.model_validate_json(patch.model_dump_json())
    again = round_trip(reloaded, checkouts, repository, work.parent / "again")
    assert state(again) == state(work)
    assert diff(fresh, work).empty


def test_round_trip_inside_another_repository(
    trees: tuple[Path, Path],
    checkouts: Checkouts,
    repository: tuple[RepositoryBuilder, str],
) -> None:
    """Working copies may live inside the user's repository (``.bugbout/``): ``git apply``
    must treat the tree as its own root, not as a subdirectory of that repository."""
    base, work = trees
    edit_everything(work)
    patch = diff(base, work)
    inside = repository[0].path / ".bugbout" / "attempt" / "fresh"
    fresh = round_trip(patch, checkouts, repository, inside)
    assert state(fresh) == state(work)


def test_applying_sections_to_a_copy_with_the_users_git_config(
    trees: tuple[Path, Path],
    checkouts: Checkouts,
    repository: tuple[RepositoryBuilder, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A global config that rewrites whitespace or line endings is not read."""
    config = tmp_path / "gitconfig"
    config.write_text("[apply]\n\twhitespace = fix\n[core]\n\tautocrlf = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "nowhere"))
    base, work = trees
    (work / "src/pkg/core.py").write_text("trailing   \n\ttabs\t\n")
    (work / "src/pkg/crlf.py").write_bytes(b"a = 1\r\nb = 2   \r\n")
    fresh = round_trip(diff(base, work), checkouts, repository, tmp_path / "fresh")
    assert state(fresh) == state(work)


# -- applying ------------------------------------------------------------------------------


def test_an_empty_diff_applies_as_nothing(trees: tuple[Path, Path]) -> None:
    base, work = trees
    apply_patch(work, "")
    assert state(work) == state(base)


def test_a_diff_that_does_not_apply_names_the_file_and_writes_nothing(
    trees: tuple[Path, Path], checkouts: Checkouts, repository: tuple[RepositoryBuilder, str]
) -> None:
    base, work = trees
    (work / "src/pkg/__init__.py").write_text('"""pkg, documented."""\n')
    (work / "src/pkg/core.py").write_text("changed\n")
    patch = diff(base, work)
    target = fresh_copy(checkouts, repository, work.parent / "target")
    (target / "src/pkg/core.py").write_text("something else entirely\n")
    before = state(target)
    with pytest.raises(PatchError, match=r"src/pkg/core\.py: patch does not apply"):
        apply_patch(target, patch.source)
    assert state(target) == before  # not even the file that would have applied
    (target / "src/pkg/core.py").unlink()
    with pytest.raises(PatchError, match=r"src/pkg/core\.py"):
        apply_patch(target, patch.source)
    with pytest.raises(PatchError):
        apply_patch(target, "this is not a diff\n")


def test_adding_a_file_that_exists(
    trees: tuple[Path, Path], checkouts: Checkouts, repository: tuple[RepositoryBuilder, str]
) -> None:
    base, work = trees
    (work / "NEW.md").write_text("new\n")
    patch = diff(base, work)
    target = fresh_copy(checkouts, repository, work.parent / "target")
    (target / "NEW.md").write_text("already\n")
    with pytest.raises(PatchError, match=r"NEW\.md: already exists"):
        apply_patch(target, patch.other)


def new_file(path: str, content: str = "escaped\n") -> str:
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1 @@\n+{content}"
    )


def everything_under(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*")}


@pytest.mark.parametrize(
    "hostile",
    [
        new_file("../escape"),
        new_file("src/../../escape"),
        new_file("/tmp/bugbout-absolute-escape"),
        new_file(".git/hooks/post-checkout"),
        new_file("src/.GIT/config"),
        # A traditional (non-git) diff.
        "--- a/../escape\n+++ b/../escape\n@@ -0,0 +1 @@\n+escaped\n",
        # A rename out of the tree.
        "diff --git a/README.md b/../escape\nsimilarity index 100%\n"
        "rename from README.md\nrename to ../escape\n",
        # A symlink out of the tree, then a file through it.
        "diff --git a/out b/out\nnew file mode 120000\n--- /dev/null\n+++ b/out\n"
        "@@ -0,0 +1 @@\n+..\n\\ No newline at end of file\n" + new_file("out/escape"),
        # A good file first: nothing at all may be written.
        new_file("fine.txt", "fine\n") + new_file("../escape"),
    ],
)
def test_hostile_diffs_are_refused_and_write_nothing(
    tmp_path: Path, trees: tuple[Path, Path], hostile: str
) -> None:
    _, work = trees
    outside = everything_under(tmp_path)
    before = state(work)
    with pytest.raises(PatchError, match="refusing the patch"):
        apply_patch(work, hostile)
    assert everything_under(tmp_path) == outside
    assert state(work) == before
    assert not Path("/tmp/bugbout-absolute-escape").exists()


def test_a_symlink_in_the_tree_is_not_a_way_out(tmp_path: Path, trees: tuple[Path, Path]) -> None:
    _, work = trees
    (tmp_path / "elsewhere").mkdir()
    (work / "exit").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(PatchError, match="beyond the symlink 'exit'"):
        apply_patch(work, new_file("exit/escape"))
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_hunk_lines_that_look_like_headers_are_content(
    trees: tuple[Path, Path], checkouts: Checkouts, repository: tuple[RepositoryBuilder, str]
) -> None:
    """A removed line ``-- ../x`` is ``--- ../x`` in a hunk: content, not a path."""
    base, work = trees
    docs = work / "docs/index.md"
    docs.write_text("-- ../etc/passwd\n++ ../escape\n")
    first = diff(base, work)
    middle = fresh_copy(checkouts, repository, work.parent / "middle")
    apply_patch(middle, first.other)
    docs.write_text("# pkg\n")
    second = diff_trees(middle, work, source=SOURCE, tests=TESTS)
    assert "\n--- ../etc/passwd\n" in second.other and "\n-++ ../escape\n" in second.other
    apply_patch(middle, second.other)
    assert (middle / "docs/index.md").read_text() == "# pkg\n"


# -- limits --------------------------------------------------------------------------------


def limited(base: Path, work: Path, **limits: int) -> Patch:
    return diff_trees(base, work, source=SOURCE, tests=TESTS, limits=LimitsSettings(**limits))


def test_a_file_past_the_patch_size_is_never_read(trees: tuple[Path, Path]) -> None:
    base, work = trees
    with (work / "huge.bin").open("wb") as handle:
        handle.truncate(1_000_000_000)  # sparse: a gigabyte to read, none on disk
    tracemalloc.start()
    try:
        with pytest.raises(LimitExceeded) as raised:
            diff(base, work)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(raised.value) == (
        "patch too large (1,000 MB > 10 MB limit; setting limits.patch-size)"
    )
    assert peak < 5_000_000


def test_the_patch_size_counts_the_diff_not_the_files(
    trees: tuple[Path, Path], tmp_path: Path
) -> None:
    base, work = trees
    lines = "".join(f"LINE_{n} = {n}\n" for n in range(200_000))
    (work / "src/pkg/util.py").write_text(lines)
    assert len(limited(base, work, patch_size=10_000_000).source) > 2_000_000
    # The same 3 MB file changed by one line: a small diff, within a small limit.
    bigger_base = shutil.copytree(work, tmp_path / "bigger-base", symlinks=True)
    (work / "src/pkg/util.py").write_text(lines.replace("LINE_7 = 7", "LINE_7 = 8"))
    small = limited(bigger_base, work, patch_size=10_000)
    assert [change.path for change in small.files] == ["src/pkg/util.py"]
    assert len(small.source) < 1000


def test_many_small_diffs_add_up_past_the_patch_size(trees: tuple[Path, Path]) -> None:
    base, work = trees
    for number in range(5):
        (work / f"notes-{number}.txt").write_text("note\n" * 60_000)  # 300 kB each
    with pytest.raises(LimitExceeded, match=r"patch too large \(\d MB > 1 MB limit"):
        limited(base, work, patch_size=1_000_000)


def test_the_walk_stops_at_the_file_limit_even_inside_one_directory(
    trees: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, work = trees
    (work / "junk").mkdir()
    for number in range(3000):
        (work / "junk" / str(number)).touch()
    seen = 0
    real = treewalk._entry

    def counted(entry: os.DirEntry[str] | None) -> treewalk.Entry | None:
        nonlocal seen
        seen += 1
        return real(entry)

    monkeypatch.setattr(treewalk, "_entry", counted)
    with pytest.raises(LimitExceeded) as raised:
        limited(base, work, files=100)
    assert str(raised.value) == "too many files (101 > 100 limit; setting limits.files)"
    assert seen < 100  # stopped while listing, before looking at the added files


def test_added_directories_count_toward_the_file_limit(trees: tuple[Path, Path]) -> None:
    base, work = trees
    folder = work
    for depth in range(60):
        folder = folder / f"d{depth}"
        folder.mkdir()
        (folder / "f").touch()
    with pytest.raises(LimitExceeded, match="too many files"):
        limited(base, work, files=100)
    assert len(limited(base, work, files=120).files) == 60
