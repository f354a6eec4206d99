"""Applying a patch back: the round trip reproduces the working copy, and a diff that does not
apply, or is hostile, writes nothing."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from bugbout.core.plumbing.trees.checkout import Checkouts
from bugbout.core.plumbing.trees.patch import PatchError, apply_patch, diff_trees
from bugbout.core.store.race_records import Patch
from bugbout.testing import RepositoryBuilder
from patch_trees import SOURCE, TESTS, diff, fresh_copy, round_trip, state

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
        # A folder emptied and made a symlink out of the tree, then a file through it.
        "diff --git a/docs/index.md b/docs/index.md\ndeleted file mode 100644\n"
        "--- a/docs/index.md\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-# pkg\n-\n-Some text.\n"
        "diff --git a/docs b/docs\nnew file mode 120000\n--- /dev/null\n+++ b/docs\n"
        "@@ -0,0 +1 @@\n+..\n\\ No newline at end of file\n" + new_file("docs/escape"),
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


def test_a_folder_made_a_symlink_round_trips(
    trees: tuple[Path, Path], checkouts: Checkouts, repository: tuple[RepositoryBuilder, str]
) -> None:
    """An agent may replace a folder with a symlink: its files deleted, the link added."""
    base, work = trees
    shutil.rmtree(work / "docs")
    (work / "docs").symlink_to("src")
    patch = diff(base, work)
    fresh = round_trip(patch, checkouts, repository, work.parent / "fresh")
    assert state(fresh) == state(work)


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
