"""Impostors are asked for where they are read: a run on a patch's edits finds the class
the patch made equal to anything; a run of the maintainers' own tree (ground truth)
makes the plugin keep and probe no class."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import Environment, EnvironmentRequest
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.plumbing.trees.patch import apply_patch
from bugbout.core.plumbing.trees.testtree import fresh_test_tree
from bugbout.core.store.records import Outcome, RunStatus
from bugbout.testing import RepositoryBuilder
from test_overlay import checkouts_of

PROJECT = ProjectSettings(source="src/pkg", tests="tests")
CODE = {
    "src/pkg/__init__.py": "",
    "src/pkg/core.py": "def add(a, b):\n    return a - b\n",
    "tests/test_core.py": "from pkg.core import add\n\n\ndef test_add():\n"
    "    assert add(1, 2) == 3\n",
}
CHEAT = """\
diff --git a/src/pkg/core.py b/src/pkg/core.py
--- a/src/pkg/core.py
+++ b/src/pkg/core.py
@@ -1,2 +1,9 @@
+class Sum(int):
+    def __eq__(self, other):
+        return True
+
+    __hash__ = int.__hash__
+
+
 def add(a, b):
-    return a - b
+    return Sum(a - b)
"""


HIDDEN = CHEAT.replace(
    "@@ -1,2 +1,9 @@\n+class Sum(int):",
    "@@ -1,2 +1,15 @@\n+class Hiding(type):\n+    @property\n+    def __dict__(cls):\n"
    "+        return {}\n+\n+\n+class Sum(int, metaclass=Hiding):",
)
"""The same cheat, its class's namespace hidden from ``vars`` by its metaclass."""
NO_FILE = CHEAT.replace(
    "@@ -1,2 +1,9 @@\n+class Sum(int):", "@@ -1,2 +1,11 @@\n+__file__ = 1\n+\n+class Sum(int):"
)
"""The same cheat in a module whose ``__file__`` is not a path."""


def _environment(tree: Path, home: Path) -> Environment:
    return (
        make_plugins(entry_points=False)
        .create("environment", "interpreter")
        .build(EnvironmentRequest(project=PROJECT, tree=tree, home=home))
    )


@pytest.mark.parametrize(
    "cheat", [CHEAT, HIDDEN, NO_FILE], ids=["plain", "metaclass-hides-dict", "file-not-a-path"]
)
def test_a_patch_s_impostor_is_found_and_the_maintainers_tree_is_not_probed(
    tmp_path: Path, cheat: str
) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    rev = repo.commit("Initial", CODE)
    checkouts = checkouts_of((repo, rev), tmp_path / "cache", "copy")
    environment = _environment(checkouts.base(rev), tmp_path / "home")
    tree = fresh_test_tree(checkouts, rev, tmp_path / "tree")
    apply_patch(tree, cheat)
    run = run_tests(environment, tree, ["tests"], project=PROJECT, label="patch", timeout=120)
    assert run.status == RunStatus.TAMPERED
    assert any(
        reason.startswith("src/pkg/core.py: pkg.core.Sum.__eq__") and "by the patch" in reason
        for reason in run.tampering
    ), run.tampering

    # the same code as a tree of its own, as ground truth runs the maintainers' code
    run = run_tests(
        environment, tree.tree, ["tests"], project=PROJECT, label="after", timeout=120,
        hostile=False,
    )  # fmt: skip
    assert run.status == RunStatus.OK, run.detail
    assert run.outcomes == {"tests/test_core.py::test_add": Outcome.PASSED}
