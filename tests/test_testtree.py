"""Test runs on a patch use an overlay of the cached tree: bugbout's edits (patches,
installed files, deletions) give the tree a copy gives, and pytest sees that tree."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import Command, Environment, EnvironmentRequest
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.plumbing.trees.checkout import Checkouts
from bugbout.core.plumbing.trees.patch import apply_patch
from bugbout.core.plumbing.trees.testtree import TestTree, fresh_test_tree
from bugbout.core.plumbing.trees.tree_files import install_file
from bugbout.core.store.records import Outcome, RunStatus
from bugbout.sandbox.overlay import enter, is_whiteout
from bugbout.testing import RepositoryBuilder
from test_overlay import EDITS, FILES, checkouts_of, edit, needs_overlay, patch_of

LIST = """
import hashlib, json, os, stat, sys
found = {}
for top, dirs, files in os.walk("."):
    for name in dirs + files:
        path = os.path.join(top, name)[2:]
        info = os.lstat(path)
        if stat.S_ISDIR(info.st_mode):
            found[path] = "dir"
        elif stat.S_ISLNK(info.st_mode):
            found[path] = "link " + os.readlink(path)
        else:
            data = open(path, "rb").read()
            found[path] = "%o %s" % (info.st_mode & 0o777, hashlib.sha256(data).hexdigest())
json.dump(found, sys.stdout)
"""


@pytest.fixture
def repository(tmp_path: Path) -> tuple[RepositoryBuilder, str]:
    repo = RepositoryBuilder(tmp_path / "repo")
    return repo, repo.commit("Initial", FILES)


def merged(tree: TestTree) -> dict[str, str]:
    """What a process running in the test tree sees: every path, kind, mode and content."""
    tree.seal()
    argv = [sys.executable, "-c", LIST]
    if tree.overlay is not None:
        argv = enter(tree.overlay, argv)
    result = subprocess.run(argv, cwd=tree.tree, check=True, capture_output=True, text=True)
    return dict(json.loads(result.stdout))


def edited(checkouts: Checkouts, rev: str, root: Path, source: str, tests: str) -> TestTree:
    """A test tree with what the verdict stages do to one: two patches applied, a test
    module written over, one added, one deleted."""
    tree = fresh_test_tree(checkouts, rev, root)
    apply_patch(tree, source)
    apply_patch(tree, tests)
    install_file(tree, "tests/test_extra.py", b"def test_extra():\n    pass\n")
    install_file(tree, "src/pkg/new.py", b"NEW = 2\n")
    install_file(tree, "README.md", None)
    return tree


@needs_overlay
def test_an_overlay_test_tree_is_the_tree_a_copy_gives(
    tmp_path: Path, repository: tuple[RepositoryBuilder, str]
) -> None:
    _, rev = repository
    copies = checkouts_of(repository, tmp_path / "copies", "copy")
    made = copies.attempt_copy(rev, tmp_path / "attempt")
    edit(made, EDITS)
    patch = patch_of(copies, rev, made)
    assert patch.source and patch.tests
    expected = merged(edited(copies, rev, tmp_path / "by-copy", patch.source, patch.tests))

    overlays = checkouts_of(repository, tmp_path / "overlays", "overlay")
    tree = edited(overlays, rev, tmp_path / "by-overlay", patch.source, patch.tests)
    assert tree.overlay is not None
    assert merged(tree) == expected
    assert "src/pkg/gone" not in expected  # emptied directories are gone, as in a copy
    assert "src/pkg/sub/b.py" not in expected and "src/pkg/sub/c.py" in expected
    assert not (tree.edits / "src/pkg/__init__.py").exists()  # only what is edited is copied
    # the cached tree is untouched
    assert (overlays.base(rev) / "README.md").read_text() == FILES["README.md"]


@needs_overlay
def test_a_path_deleted_by_one_edit_stays_deleted_for_the_next(
    tmp_path: Path, repository: tuple[RepositoryBuilder, str]
) -> None:
    _, rev = repository
    checkouts = checkouts_of(repository, tmp_path / "cache", "overlay")
    tree = fresh_test_tree(checkouts, rev, tmp_path / "tree")
    install_file(tree, "src/pkg/old.py", None)
    tree.expose(["src/pkg/old.py"])  # a later patch naming it must not bring it back
    seen = merged(tree)
    assert "src/pkg/old.py" not in seen and "src/pkg/core.py" in seen


PROJECT = ProjectSettings(source="src/pkg", tests="tests")
CODE = {
    "src/pkg/__init__.py": "",
    "src/pkg/core.py": "def add(a, b):\n    return a - b\n",
    "tests/test_core.py": "from pkg.core import add\n\n\ndef test_add():\n"
    "    assert add(1, 2) == 3\n\n\ndef test_ok():\n    pass\n",
    "tests/test_gone.py": "def test_gone():\n    pass\n",
}
FIX = """\
diff --git a/src/pkg/core.py b/src/pkg/core.py
--- a/src/pkg/core.py
+++ b/src/pkg/core.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
diff --git a/tests/test_gone.py b/tests/test_gone.py
deleted file mode 100644
--- a/tests/test_gone.py
+++ /dev/null
@@ -1,2 +0,0 @@
-def test_gone():
-    pass
"""


class _Contained:
    """An environment whose command confines itself (as a container's does)."""

    def __init__(self, inner: Environment) -> None:
        self.inner = inner
        self.description, self.key = inner.description, inner.key

    def command(self, args: list[str], tree: Path, extra_paths: list[Path]) -> Command:
        return self.inner.command(args, tree, extra_paths).model_copy(update={"contained": True})


@pytest.mark.slow
@needs_overlay
@pytest.mark.parametrize("contained", [False, True])
def test_pytest_runs_on_the_patched_overlay(tmp_path: Path, contained: bool) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    rev = repo.commit("Initial", CODE)
    checkouts = checkouts_of((repo, rev), tmp_path / "cache", "overlay")
    environment: Environment = (
        make_plugins(entry_points=False)
        .create("environment", "interpreter")
        .build(EnvironmentRequest(project=PROJECT, tree=checkouts.base(rev), home=tmp_path / "h"))
    )
    if contained:
        environment = _Contained(environment)
    tree = fresh_test_tree(checkouts, rev, tmp_path / "tree")
    apply_patch(tree, FIX)
    run = run_tests(environment, tree, ["tests"], project=PROJECT, label="fix", timeout=120)
    assert run.status == RunStatus.OK, run.detail
    assert run.outcomes == {
        "tests/test_core.py::test_add": Outcome.PASSED,
        "tests/test_core.py::test_ok": Outcome.PASSED,
    }
    # a container cannot see the mount: it gets the merged tree as a plain copy
    assert (tree.overlay is None) == contained
    assert (tree.tree / "src/pkg/core.py").exists() == contained
    # the canaries were planted where bugbout edits, and removed: the twins' host file is
    # back byte for byte (an overlay keeps it copied up); the deletion is a whiteout
    left = sorted(path.name for path in (tree.edits / "tests").iterdir())
    assert left == (["test_core.py"] if contained else ["test_core.py", "test_gone.py"])
    assert (tree.edits / "tests/test_core.py").read_text() == CODE["tests/test_core.py"]
    assert contained or is_whiteout(tree.edits / "tests/test_gone.py")
