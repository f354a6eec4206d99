"""Ground truth's trees: the after tree is exported once and run where the before tree
was (never copied), and every tree is removed in the background, none left behind."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from bugbout.core.contract.manager import make_plugins
from bugbout.core.pipeline import compute_oracles, mine_tasks
from bugbout.core.plumbing.trees.checkout import remove_later
from bugbout.core.store.store import Store
from bugbout.testing import RepositoryBuilder
from history import calc_settings

WORDS = "def words(text):\n    return text.split(' ')\n"
FIXED = "def words(text):\n    return text.split()\n"
TEST_WORDS = (
    "from calc.words import words\n\n\n"
    "def test_tabs_split():\n    assert words('a\\tb') == ['a', 'b']\n\n\n"
    "def test_spaces_split():\n    assert words('a b') == ['a', 'b']\n"
)


def _removers() -> None:
    """Wait for every tree being removed in the background."""
    for thread in threading.enumerate():
        if thread.name.startswith("remove "):
            thread.join()


def test_ground_truth_never_copies_a_tree_and_leaves_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("BUGBOUT_HOME", str(home))
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit("Initial", {"src/calc/__init__.py": "", "src/calc/words.py": WORDS})
    fix = {"src/calc/words.py": FIXED, "tests/test_words.py": TEST_WORDS}
    sha = repo.commit("Fix splitting on tabs (#4)", fix)
    settings = calc_settings(repo.path, reruns=2)
    plugins = make_plugins(entry_points=False)
    store = Store(tmp_path / ".bugbout")
    tasks = mine_tasks(settings, plugins, store)

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a tree was copied: {args[:2]}")

    monkeypatch.setattr(shutil, "copytree", refused)
    oracle = compute_oracles(settings, plugins, store, tasks).root[sha[:12]]
    _removers()

    assert oracle.status == "ok", oracle.reason
    assert oracle.fail_to_pass == ["tests/test_words.py::test_tabs_split"]
    assert oracle.pass_to_pass == ["tests/test_words.py::test_spaces_split"]
    assert [run.label for run in oracle.runs] == ["before-1", "before-2", "after-1", "after-2"]
    assert sorted(p.name for p in (home / "work").iterdir()) == []


def test_a_tree_removed_later_is_gone_at_once_and_removed_whatever_its_modes(
    tmp_path: Path,
) -> None:
    tree = tmp_path / "tree"
    locked = tree / "locked"
    locked.mkdir(parents=True)
    (locked / "file.py").write_text("x = 1\n")
    locked.chmod(0o500)  # as a test may leave it
    trash = tmp_path / "trash"
    trash.mkdir()

    remover = remove_later(tree, trash)

    assert not tree.exists() and remover is not None
    remover.join()
    assert list(trash.iterdir()) == [] and list(tmp_path.iterdir()) == [trash]
    assert remove_later(tree) is None  # nothing there: nothing to do
