"""Python 2 trees that declare ``use_2to3``: their tests run on the copy ``2to3`` converts."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.contract.manager import Plugins, make_plugins
from bugbout.core.contract.settings import (
    BoutSettings,
    PluginChoice,
    ProjectSettings,
)
from bugbout.core.pipeline import compute_oracles, mine_tasks
from bugbout.core.plumbing.environments.environment import EnvironmentRequest
from bugbout.core.plumbing.environments.py2_tree import (
    Conversion,
    converted,
    converted_trees,
    declared_conversion,
)
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.plumbing.trees.checkout import Checkouts
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.plumbing.trees.testtree import fresh_test_tree
from bugbout.core.store.records import Outcome
from bugbout.core.store.store import Store
from bugbout.testing import RepositoryBuilder

SETUP = (
    "import sys\nfrom setuptools import setup\n\nextra = {}\n"
    "if sys.version_info[0] == 3:\n    extra['use_2to3'] = True\n\n"
    "setup(name='shout', packages=['shout'], **extra)\n"
)
BUGGY = """\
def shout(text):
    if not isinstance(text, basestring):
        raise TypeError, "text must be a string"
    try:
        return unicode(text).lower()
    except UnicodeError, e:
        print "cannot shout", e
        raise
"""
TEST = """\
from shout import shout


def test_shouts():
    assert shout(unicode("hey")) == u"HEY"


def test_refuses_numbers():
    for number in xrange(3):
        try:
            shout(number)
        except TypeError as error:
            assert "string" in str(error)
        else:
            raise AssertionError("no TypeError")
"""


def _confine(argv: list[str], tree: Path, writable: tuple[Path, ...]) -> list[str]:
    return argv


@pytest.mark.slow
def test_a_python2_fix_gets_ground_truth_on_the_converted_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit("Initial commit", {"setup.py": SETUP, "shout/__init__.py": BUGGY})
    fix = repo.commit(
        "Fix shout whispering (#1)",
        {
            "shout/__init__.py": BUGGY.replace(".lower()", ".upper()"),
            "tests/test_shout.py": TEST,
        },
    )
    settings = BoutSettings(
        project=ProjectSettings(source="shout", tests="tests"),
        issue_sources={"commit": {"issue-source": "commit"}},
        miner=PluginChoice(name="git-history"),
        environment=PluginChoice(name="interpreter"),
        root=tmp_path / "repo",
    )
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "home"))
    store = Store(tmp_path / "repo" / ".bugbout")
    plugins = make_plugins(entry_points=False)
    tasks = mine_tasks(settings, plugins, store)
    assert [task.sha for task in tasks.tasks] == [fix], tasks.excluded
    oracle = compute_oracles(settings, plugins, store, tasks).root[fix[:12]]

    assert oracle.status == "ok", oracle.reason
    assert oracle.fail_to_pass == ["tests/test_shout.py::test_shouts"]
    assert oracle.pass_to_pass == ["tests/test_shout.py::test_refuses_numbers"]
    assert len(oracle.runs) == 4
    # one conversion per tree content (before, after), reused by the reruns
    assert len([p for p in converted_trees().iterdir() if not p.name.startswith(".")]) == 2


def test_use_2to3_is_read_from_setup_py_and_setup_cfg(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text(SETUP)
    assert declared_conversion(tmp_path) == Conversion()
    (tmp_path / "setup.py").write_text(
        'print "building"\nsetup(name="x", use_2to3=True,\n'
        '      use_2to3_exclude_fixers=["lib2to3.fixes.fix_unicode"])\n'
    )
    assert declared_conversion(tmp_path) == Conversion(excluded=("lib2to3.fixes.fix_unicode",))
    (tmp_path / "setup.py").unlink()
    (tmp_path / "setup.cfg").write_text("[options]\nuse_2to3 = True\nuse_2to3_fixers = myfixes\n")
    assert declared_conversion(tmp_path) == Conversion(fixers=("myfixes",))
    (tmp_path / "setup.cfg").unlink()
    (tmp_path / "setup.py").write_text(
        "try:\n    from distutils.command.build_py import build_py_2to3 as build_py\n"
        "except ImportError:\n    from distutils.command.build_py import build_py\n"
        "setup(name='x', cmdclass={'build_py': build_py})\n"
    )
    assert declared_conversion(tmp_path) == Conversion()


def test_a_tree_without_use_2to3_is_never_converted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "home"))
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "setup.py").write_text("setup(name='x', use_2to3=False)\n")
    (tree / "mod.py").write_text('print "hi"\n')
    assert declared_conversion(tree) is None
    with converted(tree, _confine) as copy:
        assert copy is None
    assert not converted_trees().exists()


def test_excluded_fixers_are_left_out_and_the_conversion_is_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "home"))
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "setup.py").write_text(
        "setup(name='x', use_2to3=True, use_2to3_exclude_fixers=['fix_unicode'])\n"
    )
    (tree / "mod.py").write_text('print "hi", unicode(1)\n')
    with converted(tree, _confine) as copy:
        assert copy is not None
        assert copy.parent == tree.parent
        assert (copy / "mod.py").read_text() == 'print("hi", unicode(1))\n'
        (copy / "mod.py").write_text("changed by the run\n")
    assert not copy.exists()
    assert (tree / "mod.py").read_text() == 'print "hi", unicode(1)\n'  # the tree as it was
    [cached] = [p for p in converted_trees().iterdir() if not p.name.startswith(".")]
    stamp = (cached / "mod.py").stat().st_mtime_ns
    with converted(tree, _confine) as again:
        assert again is not None
        assert (again / "mod.py").read_text() == 'print("hi", unicode(1))\n'
    assert (cached / "mod.py").stat().st_mtime_ns == stamp  # reused, not converted again


def test_a_test_tree_on_a_patch_runs_converted_as_scoring_does(
    plugins: Plugins, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "home"))
    repo = RepositoryBuilder(tmp_path / "repo")
    files = {"setup.py": SETUP, "shout/__init__.py": BUGGY, "tests/test_shout.py": TEST}
    rev = repo.commit("Python 2 code", files)
    checkouts = Checkouts(Git(tmp_path / "repo"), tmp_path / "cache")
    tree = fresh_test_tree(checkouts, rev, tmp_path / "attempt")
    tree.expose(["shout/__init__.py"])  # an agent's patch, in Python 2 as the tree is
    (tree.edits / "shout/__init__.py").write_text(BUGGY.replace(".lower()", ".upper()"))
    project = ProjectSettings(source="shout", tests="tests")
    environment = plugins.create("environment", "interpreter").build(
        EnvironmentRequest(project=project, tree=checkouts.base(rev), home=tmp_path / "home")
    )
    run = run_tests(
        environment, tree, ["tests/test_shout.py"], project=project, label="score", timeout=120
    )
    assert run.outcomes == {
        "tests/test_shout.py::test_shouts": Outcome.PASSED,
        "tests/test_shout.py::test_refuses_numbers": Outcome.PASSED,
    }
    assert "raise TypeError, " in (checkouts.base(rev) / "shout/__init__.py").read_text()
