"""A JavaScript history mined through the project's runner as a bout mines it (Vitest,
registered by its entry point), then its ground truth: the tests the fix adds, by the
ids the miner found, are the ones Vitest reports failing before it and passing after."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import BoutSettings, PluginChoice, ProjectSettings
from bugbout.core.pipeline import compute_oracles, mine_tasks
from bugbout.core.store.store import Store
from bugbout.plugins.test_runners.javascript.files import SOURCE_SUFFIXES
from test_js_mining import mirror

STORE = Path.home() / ".cache" / "bugbout-tests" / "js-runners" / "npm"
"""Where the tests' npm installations are kept between sessions."""
FIX = "7959de5b49f5"
"""ufo's fix of issue 284 (``parseFilename`` read ``opts.strict`` of no options)."""


def ufo_settings(root: Path) -> BoutSettings:
    miner = {"ref": FIX, "limit": 1, "tiers": ["issue-fix"], "source-suffixes": SOURCE_SUFFIXES}
    return BoutSettings(
        project=ProjectSettings(source="src", tests="test"),
        issue_sources={"commit": {"issue-source": "commit"}},
        miner=PluginChoice(name="git-history", **miner),
        environment=PluginChoice(name="npm", store=str(STORE)),
        test_runner=PluginChoice(name="vitest"),
        root=root,
    )


def test_mining_through_vitest_finds_the_fix_and_its_added_tests(tmp_path: Path) -> None:
    settings = ufo_settings(clone(tmp_path))
    plugins = make_plugins()
    (task,) = mine_tasks(settings, plugins, Store(settings.store_dir)).tasks
    assert task.sha.startswith(FIX)
    assert (task.issue.number, task.source_files) == (284, ["src/parse.ts"])
    assert task.added_tests == ["test/parse.test.ts::parseFilename > works"]


@pytest.mark.slow
@pytest.mark.requires("js-runners")
def test_the_ids_mined_are_the_ids_vitest_reports(tmp_path: Path) -> None:
    settings = ufo_settings(clone(tmp_path))
    plugins = make_plugins()
    store = Store(settings.store_dir)
    tasks = mine_tasks(settings, plugins, store)
    oracles = compute_oracles(settings, plugins, store, tasks)
    (task,) = tasks.tasks
    oracle = oracles.root[task.id]
    assert oracle.status == "ok", oracle
    assert oracle.fail_to_pass == task.added_tests
    assert len(oracle.pass_to_pass) > 50  # the rest of the fix's test file
    assert all(test.startswith("test/parse.test.ts::") for test in oracle.pass_to_pass)


def clone(tmp_path: Path) -> Path:
    """A clone of ufo's mirror (its own history, as a user's checkout has it)."""
    tree = tmp_path / "ufo"
    source = mirror("unjs/ufo")
    subprocess.run(["git", "clone", "-q", str(source), str(tree)], check=True)
    return tree
