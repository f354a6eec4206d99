"""Applying a patch starts two git processes: one reads what it touches (its numstat and
its summary together), one applies it; the tree is the working copy, as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.plumbing.trees.checkout import Checkouts
from bugbout.core.plumbing.trees.patch import PatchError, apply_patch
from bugbout.testing import RepositoryBuilder
from patch_trees import counting, diff, fresh_copy, state


def test_a_patch_applies_with_two_git_processes(
    trees: tuple[Path, Path],
    checkouts: Checkouts,
    repository: tuple[RepositoryBuilder, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base, work = trees
    (work / "src/pkg/core.py").write_text("def add(a, b):\n    return b + a\n")
    (work / "src/pkg/sub/mod.py").unlink()
    (work / "src/pkg/new.py").write_text("NEW = 1\n")
    (work / "src/pkg/link.py").symlink_to("core.py")
    patch = diff(base, work)
    fresh = fresh_copy(checkouts, repository, work.parent / "fresh")
    started = counting(monkeypatch)
    apply_patch(fresh, patch.source)
    assert [argv[:2] for argv in started] == [["git", "apply"]] * 2  # before: 3
    assert {path: found for path, found in state(fresh).items() if path.startswith("src/")} == {
        path: found for path, found in state(work).items() if path.startswith("src/")
    }


def test_a_path_beyond_a_symlink_the_patch_makes_is_still_refused(
    trees: tuple[Path, Path], checkouts: Checkouts, repository: tuple[RepositoryBuilder, str]
) -> None:
    """The summary read with the numstat still names the symlinks the patch creates."""
    base, work = trees
    (work / "src/pkg/sub/mod.py").unlink()
    (work / "src/pkg/sub").rmdir()
    (work / "src/pkg/sub").symlink_to("/tmp")
    text = diff(base, work).source
    text += (
        "diff --git a/src/pkg/sub/evil.py b/src/pkg/sub/evil.py\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/src/pkg/sub/evil.py\n@@ -0,0 +1 @@\n+EVIL = 1\n"
    )
    fresh = fresh_copy(checkouts, repository, work.parent / "fresh")
    with pytest.raises(PatchError, match="beyond the symlink 'src/pkg/sub'"):
        apply_patch(fresh, text)
    assert (fresh / "src/pkg/sub/mod.py").is_file()
