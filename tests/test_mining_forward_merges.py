"""Merges of a maintenance line merged forward again: the git-history miner examines the
commits such a merge brings, each against its own parent, instead of the merge; a
branch started from the main line stays one task however often it took the line's news.
Real git histories."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.mine.mining import MiningRequest
from bugbout.core.store.records import TaskSet
from bugbout.plugins.miners.git_history import GitHistoryMiner, GitHistoryOptions
from bugbout.testing import RepositoryBuilder
from history import calc_settings, ground_truth


def mine(repo: Path) -> TaskSet:
    request = MiningRequest(repository=repo, project=ProjectSettings(source="src/calc"))
    return GitHistoryMiner(GitHistoryOptions(limit=None)).mine(request)


def _module(name: str, body: str) -> dict[str, str]:
    """A source module ``name`` with ``body`` and a test of it."""
    return {
        f"src/calc/{name}.py": f"def {name}(x):\n    {body}\n",
        f"tests/test_{name}.py": f"from calc.{name} import {name}\n\n\n"
        f"def test_{name}():\n    assert {name}(-2) is not None\n",
    }


def test_a_maintenance_line_merged_forward_gives_its_own_fixes(tmp_path: Path) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial",
        {"src/calc/__init__.py": "", "src/calc/absval.py": "def absval(x):\n    return x\n"},
    )
    repo.branch("1.x")
    first_fix = repo.commit(
        "Fix absval of negative numbers (#3)", _module("absval", "return abs(x)")
    )
    repo.switch("main")
    repo.commit("Document calc", {"README.md": "calc\n"})
    first_merge = repo.merge("1.x", "Merge branch '1.x' into main")
    picked = repo.commit("Fix a crash in sign (#5)", _module("sign", "return x > 0"))
    repo.switch("1.x")
    second_fix = repo.commit("Fix the rounding error (#4)", _module("rnd", "return round(x)"))
    repo.git("cherry-pick", picked)
    twin = repo.head()
    repo.switch("main")
    forward = repo.merge("1.x", "Merge branch '1.x' into main")

    found = mine(repo.path)

    walked = [forward, twin, second_fix, picked, first_merge]
    assert [task.sha for task in found.tasks] == [second_fix, picked, first_merge]
    task = found.tasks[0]
    assert (task.parent, task.tier, task.issue.number) == (first_fix, "issue-fix", 4)
    assert task.added_tests == ["tests/test_rnd.py::test_rnd"]
    assert found.excluded == {
        "forward-merge": 1,
        "cherry-picked": 1,
        "no-source-change": 1,
        "root-commit": 1,
    }
    assert found.examined == len(walked) + 2  # and the documentation commit, the root


def test_the_main_lines_news_merged_into_a_maintenance_line_is_no_task(tmp_path: Path) -> None:
    """A forward merge brings a merge of the main line into the maintenance line: that
    one merged what the main line had already, and its fix is one task, not two."""
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit("Initial", {"src/calc/__init__.py": ""})
    repo.branch("1.x")
    repo.commit("Fix absval of negatives (#3)", _module("absval", "return abs(x)"))
    repo.switch("main")
    first_merge = repo.merge("1.x", "Merge branch '1.x' into main")
    main_fix = repo.commit("Fix a crash in sign (#5)", _module("sign", "return x > 0"))
    repo.switch("1.x")
    back = repo.merge("main", "Merge branch 'main' into 1.x")
    fix = repo.commit("Fix the rounding error (#4)", _module("rnd", "return round(x)"))
    repo.switch("main")
    forward = repo.merge("1.x", "Merge branch '1.x' into main")

    found = mine(repo.path)

    assert [task.sha for task in found.tasks] == [fix, main_fix, first_merge]
    assert found.excluded == {"forward-merge": 1, "merged-back": 1, "root-commit": 1}
    assert found.examined == len([forward, fix, back, main_fix, first_merge]) + 1


def test_a_branch_that_took_the_lines_news_stays_one_task(tmp_path: Path) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit("Initial", {"src/calc/__init__.py": ""})
    repo.branch("topic")
    repo.commit("Start sign", {"src/calc/sign.py": "def sign(x):\n    return 1\n"})
    repo.switch("main")
    absval = repo.commit("Add absval", _module("absval", "return abs(x)"))
    repo.switch("topic")
    repo.merge("main", "Merge branch 'main' into topic")
    repo.commit("Test sign", _module("sign", "return (x > 0) - (x < 0)"))
    repo.switch("main")
    merge = repo.merge("topic", "Merge pull request #7 from dev/topic\n\nFix sign of negatives")

    found = mine(repo.path)

    assert [(task.sha, task.title) for task in found.tasks] == [
        (merge, "Fix sign of negatives"),
        (absval, "Add absval"),
    ]
    assert "forward-merge" not in found.excluded


@pytest.mark.slow
def test_a_fix_the_main_line_never_needed_is_replayed_on_its_own_line(tmp_path: Path) -> None:
    """The merge brings a test its first parent passes (the main line's code had moved
    on): no task; the maintenance fix is, and its test fails before it there."""
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial",
        {
            "src/calc/__init__.py": "",
            "src/calc/absval.py": "def absval(x):\n    return x\n",
            "tests/test_zero.py": "from calc.absval import absval\n\n\n"
            "def test_zero():\n    assert absval(0) == 0\n",
        },
    )
    repo.branch("1.x")
    repo.switch("main")
    repo.commit("Rewrite absval", {"src/calc/absval.py": "def absval(x):\n    return abs(x)\n"})
    repo.switch("1.x")
    repo.commit("Release 1.0", {"src/calc/__init__.py": 'VERSION = "1.0"\n'})
    repo.switch("main")
    repo.merge("1.x", "Merge branch '1.x' into main")
    repo.switch("1.x")
    fix = repo.commit(
        "Fix absval of negative numbers (#3)",
        {
            "src/calc/absval.py": "def absval(x):\n    return -x if x < 0 else x\n",
            "src/calc/__init__.py": 'VERSION = "1.0.1"\n',
            "tests/test_absval.py": "from calc.absval import absval\n\n\n"
            "def test_negative():\n    assert absval(-2) == 2\n",
        },
    )
    repo.switch("main")
    repo.git("merge", "--quiet", "--no-ff", "-X", "ours", "1.x", "-m", "Merge branch '1.x'")
    merge = repo.head()

    oracles = ground_truth(calc_settings(repo.path, {"limit": None})).root

    assert merge[:12] not in oracles
    assert oracles[fix[:12]].status == "ok"
    assert oracles[fix[:12]].fail_to_pass == ["tests/test_absval.py::test_negative"]
