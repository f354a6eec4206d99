"""Tiers of the git-history miner on a real history: which commit becomes which kind of
task, and what a task that names no issue tells an agent (its ground truth's failures,
never the fix)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.mine.mining import MiningRequest
from bugbout.core.mine.reported import scrubbed, statement
from bugbout.core.pipeline import compute_oracles, mine_tasks
from bugbout.core.store.records import Task, TaskSet
from bugbout.core.store.store import TASKS, Store
from bugbout.plugins.miners.git_history import GitHistoryMiner, GitHistoryOptions
from bugbout.testing import RepositoryBuilder
from history import calc_settings

PARSE = """\
def parse_number(text):
    return float(text.replace(",", "").lstrip("-"))
"""
FIXED = """\
def _apply_sign(text, value):
    'Negative numbers keep their sign.'
    # words in comments and strings are not names the fix introduced
    return -value if text.startswith("-") else value


def parse_number(text):
    return _apply_sign(text, float(text.replace(",", "").lstrip("-")))
"""
TEST_PARSE = """\
from calc.parse import parse_number


def test_thousands():
    assert parse_number("1,000") == 1000.0
"""
NEGATIVE = """

def test_negative():
    assert parse_number("-2.5") == -2.5
"""
FIX_MESSAGE = """\
Fix negative numbers losing their sign by calling `_apply_sign`

Numbers below zero came back positive. The new helper _apply_sign now puts the
minus back.

Signed-off-by: A Maintainer <a@example.org>
"""


def _history(root: Path) -> tuple[Path, dict[str, str]]:
    """One commit of each tier, and one of none, on a small package."""
    repo = RepositoryBuilder(root)
    sha: dict[str, str] = {}
    repo.commit(
        "Initial commit",
        {
            "pyproject.toml": '[project]\nname = "calc"\nrequires-python = ">=3.9"\n',
            "src/calc/__init__.py": "",
            "src/calc/parse.py": PARSE,
            "src/calc/scale.py": "def double(x):\n    return x + x\n",
            "tests/test_parse.py": TEST_PARSE,
            "tests/test_scale.py": "from calc.scale import double\n\n\ndef test_double():\n"
            "    assert double(2) == 4\n",
        },
    )
    sha["fix"] = repo.commit(
        FIX_MESSAGE, {"src/calc/parse.py": FIXED, "tests/test_parse.py": TEST_PARSE + NEGATIVE}
    )
    sha["issue_fix"] = repo.commit(
        "Fix double of None (#3)",
        {
            "src/calc/scale.py": "def double(x):\n    return 0 if x is None else x + x\n",
            "tests/test_scale_more.py": "from calc.scale import double\n\n\n"
            "def test_double_none():\n    assert double(None) == 0\n",
        },
    )
    sha["modified"] = repo.commit(
        "Fix thousands separators with spaces",
        {
            "src/calc/parse.py": FIXED.replace(
                'replace(",", "")', 'replace(",", "").replace(" ", "")'
            ),
            "tests/test_parse.py": (TEST_PARSE + NEGATIVE).replace(
                "== 1000.0\n", '== 1000.0\n    assert parse_number("1 000") == 1000.0\n'
            ),
        },
    )
    sha["feature"] = repo.commit(
        "Add halve",
        {
            "src/calc/scale.py": "def double(x):\n    return 0 if x is None else x + x\n\n\n"
            "def halve(x):\n    return x / 2\n",
            "tests/test_halve.py": "from calc.scale import halve\n\n\ndef test_halve():\n"
            "    assert halve(3) == 1.5\n",
        },
    )
    repo.commit("Update the README", {"README.md": "# calc\n"})
    return repo.path, sha


@pytest.fixture
def tiered(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    return _history(tmp_path / "repo")


def _mine(repo: Path, **options: object) -> TaskSet:
    request = MiningRequest(repository=repo, project=ProjectSettings(source="src/calc"))
    return GitHistoryMiner(GitHistoryOptions.model_validate(options)).mine(request)


def test_each_commit_is_a_task_of_its_tier(tiered: tuple[Path, dict[str, str]]) -> None:
    repo, sha = tiered
    found = _mine(repo, tiers=["issue-fix", "fix", "modified-test", "feature"])
    assert [(task.sha, task.tier) for task in found.tasks] == [
        (sha["feature"], "feature"),
        (sha["modified"], "modified-test"),
        (sha["issue_fix"], "issue-fix"),
        (sha["fix"], "fix"),
    ]
    tasks = {task.tier: task for task in found.tasks}
    assert [task.issue.number for task in found.tasks] == [0, 0, 3, 0]
    assert tasks["modified-test"].modified_tests == ["tests/test_parse.py::test_thousands"]
    assert tasks["modified-test"].added_tests == []
    assert tasks["fix"].added_tests == ["tests/test_parse.py::test_negative"]
    assert found.excluded == {"root-commit": 1, "no-source-change": 1}  # a feature's rules
    assert found.examined == 6


def test_the_default_tiers_leave_modified_tests_out(tiered: tuple[Path, dict[str, str]]) -> None:
    repo, _ = tiered
    found = _mine(repo)
    assert found == _mine(repo, tiers=["issue-fix", "fix", "feature"])
    assert {task.tier for task in found.tasks} == {"issue-fix", "fix", "feature"}


@pytest.mark.parametrize(
    ("tiers", "tasks", "excluded"),
    [
        (["issue-fix"], ["issue_fix"], {"not-a-fix": 3, "no-issue-reference": 2}),
        (["fix"], ["fix"], {"not-a-fix": 3, "tier-left-out": 1, "no-test-added": 1}),
        (["modified-test"], ["modified"], {"not-a-fix": 3, "tier-left-out": 1,
                                           "no-issue-reference": 1}),
        (["feature"], ["feature"], {"root-commit": 1, "no-source-change": 1,
                                    "no-issue-reference": 2, "tier-left-out": 1}),
    ],
)  # fmt: skip
def test_a_tier_left_out_says_why(
    tiered: tuple[Path, dict[str, str]],
    tiers: list[str],
    tasks: list[str],
    excluded: dict[str, int],
) -> None:
    repo, sha = tiered
    found = _mine(repo, tiers=tiers)
    assert [task.sha for task in found.tasks] == [sha[name] for name in tasks]
    assert found.excluded == excluded
    assert found.examined == len(found.tasks) + sum(found.excluded.values())


def test_an_unknown_tier_is_an_error() -> None:
    with pytest.raises(ValidationError, match="must be a list of issue-fix, fix"):
        GitHistoryOptions.model_validate({"tiers": ["fixes"]})


def test_the_message_is_scrubbed_of_the_solution() -> None:
    told = scrubbed(FIX_MESSAGE, {"_apply_sign"})
    assert (
        told == "Fix negative numbers losing their sign\n\nNumbers below zero came back positive."
    )
    merge = "Merge pull request #8 from dev/x\n\nParser crashes on empty input (#7)\n\nUse `or ''`."
    assert scrubbed("Fix ``x . y`` access\n\nIt broke ``a . b``.") == "Fix access\n\nIt broke."
    assert scrubbed(merge) == "Parser crashes on empty input"
    assert scrubbed("Fix crash in `load()`, which replaced the cache", {"load"}) == "Fix crash in"


def test_a_failure_that_shows_a_withheld_line_is_not_shown() -> None:
    told = statement(
        {"tests/test_a.py::test_x": "assert total([1, 2]) == 3", "tests/test_a.py::test_y": "ok 1"},
        withheld=["assert total([1, 2]) == 3"],
        lead="Failing:",
        close="Fix it.",
    )
    assert (
        told == "Failing:\n\n- tests/test_a.py::test_x\n- tests/test_a.py::test_y: ok 1\n\nFix it."
    )


@pytest.mark.slow
def test_a_task_without_an_issue_is_told_its_failures_not_the_fix(
    tiered: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """Real pytest runs: each tier's task is scored, and the statement of the one that
    names no issue shows its failing test and error, never the fix or the tests' code."""
    repo, sha = tiered
    tiers = ["issue-fix", "fix", "modified-test", "feature"]
    settings = calc_settings(repo, miner={"tiers": tiers})
    store, plugins = Store(tmp_path / ".bugbout"), make_plugins(entry_points=False)
    mined = mine_tasks(settings, plugins, store)
    fix = mined.get(sha["fix"][:12])
    assert fix.problem_statement == (
        "Fix negative numbers losing their sign\n\nNumbers below zero came back positive."
    )
    oracles = compute_oracles(settings, plugins, store, mined)
    assert {task.tier: oracles.root[task.id].status for task in mined.tasks} == dict.fromkeys(
        tiers, "ok"
    )
    assert oracles.root[fix.id].fail_to_pass == ["tests/test_parse.py::test_negative"]
    told = mined.get(fix.id).problem_statement
    assert told.startswith(
        "Fix negative numbers losing their sign\n\nNumbers below zero came back positive.\n\n"
        "Tests written for this bug fail on the code as it is:\n\n"
        "- tests/test_parse.py::test_negative: AssertionError: assert 2.5 == -2.5\n"
    )
    assert told.endswith("Find the bug and fix it.")
    _assert_no_leak(told, fix)
    feature = mined.get(sha["feature"][:12]).problem_statement
    assert "- tests/test_halve.py::test_halve" in feature
    assert feature.endswith("Change the code so that they pass.")
    assert "return x / 2" not in feature
    computed: set[str] = set()
    again = compute_oracles(settings, plugins, store, mine_tasks(settings, plugins, store),
                            computed=computed)  # fmt: skip
    assert computed == set()  # the statement is not part of ground truth's key
    assert again == oracles
    stored = store.read(TASKS, TaskSet)
    assert stored is not None and stored.get(fix.id).problem_statement == told


def _assert_no_leak(told: str, task: Task) -> None:
    for leak in ("_apply_sign", "calling", 'parse_number("-2.5")', "Signed-off-by", "minus"):
        assert leak not in told, leak
    assert task.tier == "fix"


def test_the_report_says_which_tiers_the_bout_used() -> None:
    from bugbout.core.report.report import Report, TaskRow
    from bugbout.render.report_sections import sections

    report = Report(
        tasks=[
            TaskRow(id="a", tier="feature", issue=0, scored=True),
            TaskRow(id="b", tier="issue-fix", issue=3, scored=True),
            TaskRow(id="c", tier="feature", issue=0, scored=True),
            TaskRow(id="d", tier="fix", issue=0, scored=False),
        ]
    )
    [agents] = [section for section in sections(report) if section.key == "agents"]
    assert "scored tasks (tiers: feature 2, issue-fix 1)." in agents.intro


def test_the_yield_is_split_by_tier_and_a_task_without_issue_shows_its_tier() -> None:
    from bugbout.cli.console import ground_truth_yield
    from bugbout.core.store.records import Oracle, OracleSet, TaskIssue

    def task(sha: str, tier: str, number: int) -> Task:
        return Task(
            id=sha, tier=tier, sha=sha, parent="p", date="2024-01-01T00:00:00+00:00",
            title="Add", issue=TaskIssue(number=number), source_files=[], test_files=[],
        )  # fmt: skip

    tasks = TaskSet(
        tasks=[task("a", "feature", 0), task("b", "feature", 0), task("c", "issue-fix", 4)]
    )
    oracles = OracleSet(
        {
            "a": Oracle(task_id="a", status="ok"),
            "b": Oracle(task_id="b", status="no-fail-to-pass"),
            "c": Oracle(task_id="c", status="ok"),
        }
    )
    assert ground_truth_yield(tasks, oracles).splitlines()[:2] == [
        "yield: 2 of 3 tasks have ground truth (67%)",
        "  by tier: feature 1 of 2 (50%), issue-fix 1 of 1 (100%)",
    ]


def test_an_issue_no_source_knows_is_told_as_a_task_without_one(tmp_path: Path) -> None:
    """Offline, the fix's own message is the only text of issue #3: it says how the bug
    was fixed, so the task is told as one that names no issue (scrubbed message, then its
    failures once ground truth ran), never the message as it is."""
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial commit",
        {
            "pyproject.toml": '[project]\nname = "calc"\nrequires-python = ">=3.9"\n',
            "src/calc/__init__.py": "",
            "src/calc/parse.py": PARSE,
            "tests/test_parse.py": TEST_PARSE,
        },
    )
    sha = repo.commit(
        FIX_MESSAGE.replace("by calling `_apply_sign`", "(#3)"),
        {"src/calc/parse.py": FIXED, "tests/test_parse.py": TEST_PARSE + NEGATIVE},
    )
    settings = calc_settings(repo.path, miner={"tiers": ["issue-fix"]})
    store, plugins = Store(tmp_path / ".bugbout"), make_plugins(entry_points=False)
    mined = mine_tasks(settings, plugins, store)
    (task,) = mined.tasks
    assert (task.sha, task.issue.number, task.issue.source) == (sha, 3, "commit")
    assert "_apply_sign" not in task.problem_statement
    compute_oracles(settings, plugins, store, mined)
    told = mined.get(task.id).problem_statement
    assert "- tests/test_parse.py::test_negative: AssertionError" in told
    for leak in ("_apply_sign", "minus", "Signed-off-by", 'parse_number("-2.5")'):
        assert leak not in told, leak


def test_a_title_that_declares_the_same_behaviour_is_no_feature(tmp_path: Path) -> None:
    """Conventional Commits: ``refactor:``, ``perf:`` or ``test:`` say the code does what
    it did, so no test can fail before them; ``feat:``, a breaking ``refactor!:`` and a
    ``perf:`` that reads like a fix stay tasks, and ``same-behaviour-types: []`` keeps all."""
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial commit",
        {
            "src/calc/__init__.py": "",
            "src/calc/scale.py": "def double(x):\n    return x + x\n",
            "tests/test_scale.py": "from calc.scale import double\n\n\ndef test_double():\n"
            "    assert double(2) == 4\n",
        },
    )
    sha: dict[str, str] = {}
    source = "def double(x):\n    return x + x\n"
    for number, title in enumerate(
        [
            "refactor(scale): one expression",
            "perf: multiply",
            "test: cover negative numbers",
            "feat: triple",
            "refactor!: take keywords",
            "perf: fix the slow path for zero",
        ]
    ):
        source += f"\n\ndef times_{number}(x):\n    return x * {number}\n"
        sha[title] = repo.commit(
            title,
            {
                "src/calc/scale.py": source,
                f"tests/test_more_{number}.py": "from calc.scale import double\n\n\n"
                f"def test_case_{number}():\n    assert double(-1) == -2\n",
            },
        )
    found = _mine(repo.path)
    kept = ["perf: fix the slow path for zero", "refactor!: take keywords", "feat: triple"]
    assert [task.sha for task in found.tasks] == [sha[title] for title in kept]
    assert [task.tier for task in found.tasks] == ["fix", "feature", "feature"]
    assert found.excluded == {"same-behaviour": 3, "root-commit": 1}
    every = _mine(repo.path, same_behaviour_types=[])
    assert len(every.tasks) == 6


def test_a_plain_title_that_declares_the_same_behaviour_is_no_task(tmp_path: Path) -> None:
    """In plain words: a title that says the change keeps what the code does (unused code
    removed, more tests, a speedup) is no ``feature``, and one whose fix words are all
    about the tests is no ``fix``; a fix and a feature with the same words stay, and
    ``same-behaviour-words: []`` keeps every one."""
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial commit",
        {
            "src/calc/__init__.py": "",
            "src/calc/scale.py": "def double(x):\n    return x + x\n",
            "tests/test_scale.py": "from calc.scale import double\n\n\ndef test_double():\n"
            "    assert double(2) == 4\n",
        },
    )
    sha: dict[str, str] = {}
    source = "def double(x):\n    return x + x\n"
    titles = [
        "Remove unused functions",
        "More complete tests for required field",
        "Speed up double for large numbers",
        "Fix test commands",
        "Improve tests for the error on empty input",
        "Document and remove dead code",
        "Bump version and add tests",
        "Fix crash when removing unused handler",
        "Fix test runner losing the caller's environment",
        "Warn about unused arguments",
        "Remove unused arguments and add a strict mode",
    ]
    for number, title in enumerate(titles):
        source += f"\n\ndef times_{number}(x):\n    return x * {number}\n"
        sha[title] = repo.commit(
            title,
            {
                "src/calc/scale.py": source,
                f"tests/test_more_{number}.py": "from calc.scale import double\n\n\n"
                f"def test_case_{number}():\n    assert double(-1) == -2\n",
            },
        )
    found = _mine(repo.path)
    kept = {task.sha: task.tier for task in found.tasks}
    assert kept == {
        sha["Remove unused arguments and add a strict mode"]: "feature",
        sha["Warn about unused arguments"]: "feature",
        sha["Fix test runner losing the caller's environment"]: "fix",
        sha["Fix crash when removing unused handler"]: "fix",
    }
    assert found.excluded == {"same-behaviour": 7, "root-commit": 1}
    every = _mine(repo.path, same_behaviour_words=[])
    assert len(every.tasks) == len(titles)
    assert [task.tier for task in every.tasks if task.sha == sha["Fix test commands"]] == ["fix"]
