"""The git-history miner on the synthetic history: exact tasks and exclusion reasons."""

from __future__ import annotations

import subprocess
from datetime import datetime
from pathlib import Path

import pytest

import history
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.mine.mining import MiningRequest, issue_references
from bugbout.core.mine.titles import fix_title_pattern
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.store.records import TaskSet
from bugbout.plugins.miners.git_history import GitHistoryMiner, GitHistoryOptions
from bugbout.testing import RepositoryBuilder


def mine(repo: Path, **options: object) -> TaskSet:
    request = MiningRequest(repository=repo, project=ProjectSettings(source="src/calc"))
    return GitHistoryMiner(GitHistoryOptions.model_validate(options)).mine(request)


def test_tasks_and_exclusions_are_exact(calc_repo: tuple[Path, dict[str, str]]) -> None:
    repo, sha = calc_repo
    found = mine(repo)
    assert [task.sha for task in found.tasks] == [sha[name] for name in history.EXPECTED_ORDER]
    assert found.excluded == history.EXPECTED_EXCLUDED
    assert found.examined == 13
    assert found.examined == len(found.tasks) + sum(found.excluded.values())


def test_task_records_what_the_fix_changed(calc_repo: tuple[Path, dict[str, str]]) -> None:
    repo, sha = calc_repo
    tasks = {task.sha: task for task in mine(repo).tasks}
    clean = tasks[sha["clean"]]
    assert clean.id == sha["clean"][:12]
    assert clean.issue.number == 1
    assert clean.source_files == ["src/calc/ops.py"]
    assert clean.test_files == ["tests/test_div.py"]
    assert clean.added_tests == [
        "tests/test_div.py::test_div",
        "tests/test_div.py::test_div_by_zero",
    ]
    modified = tasks[sha["modified_module"]]
    assert modified.issue.number == 9
    assert modified.test_files == ["tests/test_ops.py"]
    assert modified.added_tests == ["tests/test_ops.py::test_sub_negative"]
    parametrized = tasks[sha["parametrize"]]
    assert parametrized.added_tests == ["tests/test_clamp.py::test_clamp"]
    assert parametrized.issue.url == "https://github.com/calc/calc/issues/10"


def test_merge_is_judged_by_its_pull_request_title(calc_repo: tuple[Path, dict[str, str]]) -> None:
    repo, sha = calc_repo
    merge = next(task for task in mine(repo).tasks if task.sha == sha["merge"])
    assert merge.title == "absval() was wrong for negative numbers"
    assert merge.issue.number == 6
    assert merge.source_files == ["src/calc/absval.py"]
    assert merge.test_files == ["tests/test_absval.py"]


def test_newest_fix_of_an_issue_wins(calc_repo: tuple[Path, dict[str, str]]) -> None:
    repo, sha = calc_repo
    shas = [task.sha for task in mine(repo).tasks]
    assert sha["duplicate_new"] in shas
    assert sha["duplicate_old"] not in shas


def test_limit_keeps_the_newest_and_counts_the_rest(calc_repo: tuple[Path, dict[str, str]]) -> None:
    repo, sha = calc_repo
    found = mine(repo, limit=2)
    assert [task.sha for task in found.tasks] == [sha["unstable"], sha["parametrize"]]
    assert found.excluded["over-limit"] == 7


def test_a_limit_of_null_keeps_the_whole_history(
    calc_repo: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """``miner.limit=null`` (``limit: null`` in bugbout.yaml) keeps every task."""
    from bugbout.config import compose_settings
    from bugbout.core.pipeline import mine_tasks
    from bugbout.core.store.store import Store

    repo, sha = calc_repo
    found = mine(repo, limit=None)
    assert [task.sha for task in found.tasks] == [sha[name] for name in history.EXPECTED_ORDER]
    assert "over-limit" not in found.excluded
    (tmp_path / "bugbout.yaml").write_text(
        f"defaults: [base, _self_]\nproject: {{source: src/calc, repository: '{repo}'}}\n"
        "issue-sources: {github: null, file: null}\nminer: {limit: 1}\n"
    )
    settings, plugins = compose_settings(tmp_path, ["miner.limit=null"])
    whole = mine_tasks(settings, plugins, Store(tmp_path / ".bugbout"))
    assert [task.sha for task in whole.tasks] == [task.sha for task in found.tasks]


def test_max_source_files_admits_broader_fixes(calc_repo: tuple[Path, dict[str, str]]) -> None:
    repo, sha = calc_repo
    found = mine(repo, max_source_files=3)
    assert sha["three_files"] in [task.sha for task in found.tasks]
    assert "too-many-source-files" not in found.excluded


def test_since_stops_the_walk_at_older_commits(calc_repo: tuple[Path, dict[str, str]]) -> None:
    repo, _ = calc_repo
    everything = mine(repo)
    every = everything.tasks
    cutoff = every[2].date
    found = mine(repo, since=cutoff)
    assert [task.sha for task in found.tasks] == [task.sha for task in every[:3]]
    newer = subprocess.run(
        ["git", "-C", str(repo), "log", "--first-parent", "--format=%cI", "HEAD"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    walked = sum(datetime.fromisoformat(d) >= datetime.fromisoformat(cutoff) for d in newer)
    assert found.examined == walked < everything.examined
    assert found.examined == len(found.tasks) + sum(found.excluded.values())


def test_fix_words_are_configurable(calc_repo: tuple[Path, dict[str, str]]) -> None:
    repo, sha = calc_repo
    found = mine(repo, fix_words=("add",), tiers=["issue-fix"])
    assert [task.sha for task in found.tasks] == [sha["duplicate_new"], sha["not_a_fix"]]
    assert found.excluded["duplicate-issue"] == 1


def test_a_configured_ref_is_walked(calc_repo: tuple[Path, dict[str, str]]) -> None:
    repo, sha = calc_repo
    found = mine(repo, ref="feature")
    assert found.examined == 7  # six on main up to the branch point, one on the branch
    assert sha["merge"] not in [task.sha for task in found.tasks]


def test_unknown_ref_is_a_clear_error(calc_repo: tuple[Path, dict[str, str]]) -> None:
    repo, _ = calc_repo
    with pytest.raises(Exception, match="not a branch or commit"):
        mine(repo, ref="no-such-branch")


@pytest.mark.parametrize(
    ("texts", "numbers"),
    [
        (("Fix crash (#12)",), [12]),
        (("Fix crash", "Fixes #45"), [45]),
        (("Fix crash (#12)", "Closes #3"), [3, 12]),
        (("Fix gh-77 for good",), [77]),
        (("Fix GH-77",), [77]),
        (("Fix https://github.com/o/r/pull/88",), [88]),
        (("Fix crash", "See https://github.com/o/r/issues/5 and #6"), [5, 6]),
        (("Fix colour #fff",), []),
        (("Fix &#123; entity",), []),
        (("Fix crash in issue#3, PR#4",), [3, 4]),
        (("Resolves: #9",), [9]),
    ],
)
def test_issue_references(texts: tuple[str, ...], numbers: list[int]) -> None:
    assert [ref.number for ref in issue_references(*texts)] == numbers


def test_references_to_other_repositories_do_not_count() -> None:
    texts = ("Fix crash", "Fixes other/repo#9, see https://github.com/other/repo/issues/8 and #7")
    assert [ref.number for ref in issue_references(*texts, repository="me/mine")] == [7]
    assert [ref.number for ref in issue_references(*texts)] == [9, 8, 7]
    own = issue_references(
        "Fix it", "Closes https://github.com/me/mine/issues/3", repository="me/mine"
    )
    assert [(ref.number, ref.closing) for ref in own] == [(3, True)]


def _merged_branch(root: Path, message: str) -> tuple[str, MiningRequest]:
    """A repository whose main line merges a branch that adds a test and a source file:
    the merge's sha, and a request to mine it."""
    from bugbout.testing import RepositoryBuilder

    repo = RepositoryBuilder(root)
    repo.commit("Initial", {"src/calc/__init__.py": "", "tests/test_a.py": "def test_a(): pass\n"})
    repo.branch("topic")
    repo.commit(
        "Parser work",
        {
            "src/calc/parse.py": "X = 1\n",
            "tests/test_a.py": "def test_a(): pass\ndef test_b(): pass\n",
        },
    )
    repo.switch("main")
    merge = repo.merge("topic", message)
    request = MiningRequest(repository=repo.path, project=ProjectSettings(source="src/calc"))
    return merge, request


def test_merge_without_a_body_asks_the_issue_source_for_its_title(tmp_path: Path) -> None:
    merge, request = _merged_branch(tmp_path / "repo", "Merge pull request #20 from someone/topic")
    miner = GitHistoryMiner(GitHistoryOptions(tiers=("issue-fix",)))
    assert miner.mine(request).tasks == []
    asked: list[int] = []

    def titles(number: int) -> str | None:
        asked.append(number)
        return "Fix a crash in the parser" if number == 20 else None

    found = miner.mine(request, titles=titles)
    assert [(task.sha, task.title) for task in found.tasks] == [
        (merge, "Fix a crash in the parser")
    ]
    assert asked == [20]


@pytest.mark.parametrize(
    ("title", "matches"),
    [
        ("Handle errors in the parser", True),
        ("Two bugs in rounding", True),
        ("Parser crashes on empty input", True),
        ("Avoid regressions in sum()", True),
        ("Dates were parsed incorrectly", True),
        ("Fixed the tokenizer", True),
        ("Add a prefix option", False),
        ("Improve debugging output", False),
        ("Errorless refactor", False),
    ],
)
def test_fix_words_match_their_inflections(title: str, matches: bool) -> None:
    pattern = fix_title_pattern(GitHistoryOptions().fix_words)
    assert bool(pattern.search(title)) is matches


def test_a_merge_whose_own_title_names_a_fix_keeps_it(tmp_path: Path) -> None:
    message = "Fix the parser's crash on empty input\n\nCloses #31"
    merge, request = _merged_branch(tmp_path / "repo", message)
    found = GitHistoryMiner(GitHistoryOptions()).mine(request)
    assert [(task.sha, task.title) for task in found.tasks] == [
        (merge, "Fix the parser's crash on empty input")
    ]


def test_a_fix_that_only_changes_a_test_is_a_task_of_its_tier(tmp_path: Path) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    test = "from calc.ops import sub\n\n\ndef test_sub():\n    assert sub(2, 1) == 3\n"
    repo.commit("Initial", {"src/calc/ops.py": history.OPS, "tests/test_ops.py": test})
    fixed = history.OPS.replace("return a + b\n\n\ndef div", "return a - b\n\n\ndef div")
    sha = repo.commit(
        "Fix sub (#4)",
        {"src/calc/ops.py": fixed, "tests/test_ops.py": test.replace("== 3", "== 1")},
    )
    assert mine(repo.path, tiers=["issue-fix", "fix"]).tasks == []  # without the tier
    assert mine(repo.path).tasks == []  # nor by default
    [task] = mine(repo.path, tiers=["issue-fix", "fix", "modified-test"]).tasks
    assert (task.sha, task.tier, task.added_tests) == (sha, "modified-test", [])
    assert task.modified_tests == ["tests/test_ops.py::test_sub"]


def test_test_modules_are_read_in_one_batch(
    calc_repo: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every fix's test modules, before and after, come from git in one round trip."""
    repo, _ = calc_repo
    rounds: list[list[str]] = []
    ask = Git._ask

    def counted(git: Git, names: list[str]) -> list[tuple[str, str, bytes] | None]:
        rounds.append(names)
        return ask(git, names)

    monkeypatch.setattr(Git, "_ask", counted)
    found = mine(repo)
    assert len(found.tasks) > 1
    assert len(rounds) == 1
    assert len(rounds[0]) >= len(found.tasks)  # at least each task's module after the fix


@pytest.mark.parametrize(
    ("config", "overrides", "note"),
    [
        ({}, ["miner.limit=1"], None),
        ({"miner": {"limit": 1}}, [], None),
        ({}, ["tasks.limit=1"], "tasks.limit=1: `tasks.limit` is now `miner.limit`; write "
         "miner.limit=1 (tasks.limit still works)"),
        ({"tasks": {"limit": 1}}, [], "bugbout.yaml: `tasks.limit:` is now `miner.limit:`; "
         "rename it (tasks.limit still works)"),
    ],
)  # fmt: skip
def test_the_miner_options_of_bugbout_yaml_and_the_command_line_reach_the_miner(
    calc_repo: tuple[Path, dict[str, str]],
    tmp_path: Path,
    config: dict[str, object],
    overrides: list[str],
    note: str | None,
) -> None:
    """``miner.limit`` (and the old ``tasks.limit``, with a note) limits what is mined."""
    import yaml

    from bugbout.config import compose_settings
    from bugbout.core.pipeline import mine_tasks
    from bugbout.core.store.store import Store

    repo, _ = calc_repo
    written = {
        "defaults": ["base", "_self_"],
        "project": {"source": "src/calc", "repository": str(repo)},
        "issue-sources": {"github": None, "file": None},
        **config,
    }
    (tmp_path / "bugbout.yaml").write_text(yaml.safe_dump(written, sort_keys=False))
    notes: list[str] = []
    settings, plugins = compose_settings(tmp_path, overrides, warn=notes.append)
    found = mine_tasks(settings, plugins, Store(tmp_path / ".bugbout"))
    assert len(found.tasks) == 1
    assert found.excluded["over-limit"] >= 1
    assert [n.replace(str(tmp_path / "bugbout.yaml"), "bugbout.yaml") for n in notes] == (
        [note] if note else []
    )
