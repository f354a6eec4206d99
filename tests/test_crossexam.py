"""Cross-examination on a one-bug repository: real git, real checkouts, real pytest under
bubblewrap. The attempts are built by hand from edited working copies, as the race would."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import (
    BoutSettings,
    PluginChoice,
    ProjectSettings,
    TasksSettings,
)
from bugbout.core.crossexam.crossexam import (
    author_slug,
    cross_examine,
    plan_installation,
)
from bugbout.core.plumbing.bench import Bench
from bugbout.core.plumbing.confinement import confine as confinement
from bugbout.core.plumbing.confinement.confine import Confine
from bugbout.core.plumbing.environments.environment import Environment, EnvironmentRequest
from bugbout.core.plumbing.testruns.test_runner import TestRunRequest
from bugbout.core.plumbing.trees.checkout import Checkouts
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.plumbing.trees.patch import PatchError, diff_trees
from bugbout.core.plumbing.trees.tree_files import install_file
from bugbout.core.store.race_records import Attempt, AttemptStatus, ChangeArea, Examination, Patch
from bugbout.core.store.records import Oracle, Outcome, RunStatus, Task, TaskIssue, TestRun
from bugbout.core.store.verdict_records import SUITE, UNFIXED, Matrix
from bugbout.core.truth.oracle import compute_oracle
from bugbout.testing import RepositoryBuilder
from runners import pytest_runner

PASSED, FAILED, ERROR = Outcome.PASSED, Outcome.FAILED, Outcome.ERROR

CORE = """\
def middle(values):
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def spread(values):
    return max(values) - min(values)
"""
FIXED = """\
def middle(values):
    ordered = sorted(values)
    half = len(ordered) // 2
    if len(ordered) % 2 == 0:
        return (ordered[half - 1] + ordered[half]) / 2
    return ordered[half]


def spread(values):
    return max(values) - min(values)
"""
WRONG = FIXED.replace("(ordered[half - 1] + ordered[half]) / 2", "ordered[half - 1]")
BREAKS_SPREAD = FIXED.replace("max(values) - min(values)", "max(values) - min(values) + 1")
CONFTEST = "import pytest\n\n\n@pytest.fixture\ndef even():\n    return [4, 1, 3, 2]\n"
SUITE_TESTS = """\
from mid.core import middle, spread


def test_odd():
    assert middle([3, 1, 2]) == 2


def test_spread():
    assert spread([1, 5, 3]) == 4
"""
FIX_TESTS = SUITE_TESTS + "\n\ndef test_even():\n    assert middle([4, 1, 3, 2]) == 2.5\n"
LEGACY = "def test_legacy():\n    pass\n"

GOOD_TESTS = """\
from mid.core import middle


def test_even_fixture(even):
    assert middle(even) == 2.5


def test_pair():
    assert middle([1, 2]) == 1.5
"""
WRONG_TESTS = "from mid.core import middle\n\n\ndef test_pair():\n    assert middle([1, 2]) == 1\n"
BREAKER_TESTS = (
    SUITE_TESTS.replace("== 4", "== 5")
    + "\n\ndef test_even():\n    assert middle([4, 1, 3, 2]) == 2.5\n"
)
EXAMINER_TESTS = """\
from mid.core import middle


def test_even():
    assert middle([1, 2, 3, 4]) == 2.5


def test_odd_still_works():
    assert middle([5, 1, 3]) == 3
"""

PROJECT = ProjectSettings(source="src/mid", tests="tests")


@dataclass
class World:
    """Everything cross-examination and scoring need, built once per module."""

    task: Task
    oracle: Oracle
    checkouts: Checkouts
    environment: Environment
    confine: Confine
    git: Git
    attempts: dict[str, Attempt]

    def attempt(self, name: str, files: dict[str, str | None], **fields: Any) -> Attempt:
        """An attempt whose patch is what writing ``files`` (``None``: delete) into a fresh
        copy of the parent changed, as the race records it."""
        tree = self.checkouts.cache_dir / "edits" / name
        self.checkouts.working_copy(self.task.parent, tree)
        for path, text in files.items():
            if text is None:
                (tree / path).unlink()
            else:
                (tree / path).parent.mkdir(parents=True, exist_ok=True)
                (tree / path).write_text(text)
        patch = diff_trees(
            self.checkouts.base(self.task.parent), tree, source=PROJECT.source, tests=PROJECT.tests
        )
        self.checkouts.remove(tree)
        return record(self.task, name, patch, **fields)

    def examine(
        self, attempts: list[Attempt], *, run_suite: bool = True, runner: Any = None
    ) -> Matrix:
        runner = runner or pytest_runner()
        bench = Bench(
            self.checkouts, self.environment, PROJECT, 120, self.confine, ("tests",), runner
        )
        return cross_examine(self.task, attempts, bench, run_suite=run_suite)


def record(task: Task, name: str, patch: Patch, **fields: Any) -> Attempt:
    values: dict[str, Any] = {
        "task_id": task.id,
        "contestant": name,
        "key": name,
        "agent": "command",
        "status": AttemptStatus.FINISHED,
        "patch": patch,
    }
    return Attempt(**(values | fields))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    yield from build_world(tmp_path_factory)


def build_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """The repository, its task and oracle (computed for real), and the attempts:

    - ``good`` fixes the bug and adds ``tests/test_regression.py``;
    - ``wrong`` fixes it wrongly and adds its own ``tests/test_regression.py``;
    - ``breaker`` fixes it, breaks ``spread`` and edits ``tests/test_core.py`` to match;
    - ``empty`` changes nothing; ``exam`` is an examiner with ``tests/test_examined.py``;
    - ``stale``'s source diff does not apply; ``late`` timed out with a correct fix.
    """
    root = tmp_path_factory.mktemp("crossexam")
    home = root / "home"
    repo = RepositoryBuilder(root / "repo")
    parent = repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "mid"\nrequires-python = ">=3.9"\n',
            "src/mid/__init__.py": "",
            "src/mid/core.py": CORE,
            "tests/conftest.py": CONFTEST,
            "tests/test_core.py": SUITE_TESTS,
            "tests/test_legacy.py": LEGACY,
        },
    )
    sha = repo.commit(
        "Fix middle of even-length lists (#1)",
        {"src/mid/core.py": FIXED, "tests/test_core.py": FIX_TESTS},
        remove=["tests/test_legacy.py"],
    )
    task = Task(
        id=sha[:12],
        sha=sha,
        parent=parent,
        date="2023-11-14T23:13:20+00:00",
        title="Fix middle of even-length lists (#1)",
        issue=TaskIssue(number=1),
        source_files=["src/mid/core.py"],
        test_files=["tests/test_core.py"],
        changed_test_files=["tests/test_core.py"],
        deleted_test_files=["tests/test_legacy.py"],
        added_tests=["test_even"],
    )
    settings = BoutSettings(
        project=PROJECT,
        issue_sources={"commit": {"issue-source": "commit"}},
        tasks=TasksSettings(reruns=1),
        environment=PluginChoice(name="interpreter"),
        sandbox=PluginChoice(name="bubblewrap"),
        root=repo.path,
    )
    plugins = make_plugins(entry_points=False)
    sandbox = plugins.create("sandbox", "bubblewrap")
    problem = sandbox.problem()
    assert problem is None, problem
    confine = confinement.test_confinement(
        settings.limits.tests,
        sandbox,
        home,
        confinement.masked_paths(settings.repository, settings.store_dir, home),
    )  # not a test
    builder = plugins.create("environment", "interpreter")
    with Git(repo.path) as git:
        checkouts = Checkouts(git, home / "checkouts")
        environment = builder.build(
            EnvironmentRequest(project=PROJECT, tree=checkouts.base(sha), home=home)
        )
        oracle = compute_oracle(
            task, git=git, builder=builder, runner=pytest_runner(),
            project=settings.project, tasks=settings.tasks, home=home,
            key="k", confine=confine,
        )  # fmt: skip
        made = World(task, oracle, checkouts, environment, confine, git, {})
        good = made.attempt(
            "good",
            {"src/mid/core.py": FIXED, "tests/test_regression.py": GOOD_TESTS},
            vendor="anthropic",
        )
        wrong = made.attempt(
            "wrong",
            {"src/mid/core.py": WRONG, "tests/test_regression.py": WRONG_TESTS},
            vendor="openai",
        )
        breaker = made.attempt(
            "breaker",
            {"src/mid/core.py": BREAKS_SPREAD, "tests/test_core.py": BREAKER_TESTS},
            vendor="google",
        )
        empty = made.attempt("empty", {}, vendor="anthropic")
        exam = made.attempt(
            "exam",
            {"tests/test_examined.py": EXAMINER_TESTS},
            vendor="openai",
            role="examiner",
            examination=Examination(assignment="specify"),
        )
        stale_source = good.patch.source.replace(
            " ordered = sorted(values)\n", " ordered = sorted(values, reverse=True)\n", 1
        )
        assert stale_source != good.patch.source
        stale = record(
            task, "stale", Patch(source=stale_source, files=good.patch.area(ChangeArea.SOURCE))
        )
        late = made.attempt(
            "late", {"src/mid/core.py": FIXED}, status=AttemptStatus.TIMEOUT, vendor="openai"
        )
        made.attempts = {a.contestant: a for a in (good, wrong, breaker, empty, exam, stale, late)}
        yield made


Counted = list[tuple[str, list[str]]]


@pytest.fixture(scope="module")
def examined(world: World) -> tuple[Matrix, Counted]:
    """The full cross-examination, with every pytest process it starts counted."""
    calls: Counted = []
    real = pytest_runner()

    class Counting:
        """The pytest runner, counting its runs."""

        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def run(self, request: TestRunRequest) -> TestRun:
            calls.append((request.label, list(request.targets)))
            return real.run(request)

    matrix = world.examine(list(world.attempts.values()), runner=Counting())
    return matrix, calls


GOOD = "tests/test_bb_good__regression.py"
WRONG_MODULE = "tests/test_bb_wrong__regression.py"
BREAKER = "tests/test_bb_breaker__core.py"
EXAM = "tests/test_bb_exam__examined.py"


def test_the_ground_truth_is_what_the_fixture_says(world: World) -> None:
    assert world.oracle.status == "ok"
    assert world.oracle.fail_to_pass == ["tests/test_core.py::test_even"]
    assert world.oracle.pass_to_pass == [
        "tests/test_core.py::test_odd",
        "tests/test_core.py::test_spread",
    ]


def test_columns_are_finished_contestants_with_source_changes(
    examined: tuple[Matrix, Counted],
) -> None:
    matrix, _ = examined
    # empty changed nothing (it is the unfixed code again), exam is an examiner, late timed out
    assert matrix.patches == [UNFIXED, "good", "wrong", "breaker", "stale"]
    assert matrix.vendors == {
        UNFIXED: None,
        SUITE: None,
        "good": "anthropic",
        "wrong": "openai",
        "breaker": "google",
        "exam": "openai",
        "stale": None,
    }


def test_every_author_gets_modules_of_its_own(examined: tuple[Matrix, Counted]) -> None:
    matrix, _ = examined
    assert matrix.authors == {
        "good": [f"{GOOD}::test_even_fixture", f"{GOOD}::test_pair"],
        "wrong": [f"{WRONG_MODULE}::test_pair"],
        "breaker": [f"{BREAKER}::test_even", f"{BREAKER}::test_odd", f"{BREAKER}::test_spread"],
        "exam": [f"{EXAM}::test_even", f"{EXAM}::test_odd_still_works"],
        # the parent's tests: test_legacy (which the fix deletes) runs, the fix's test_even not
        SUITE: [
            "tests/test_core.py::test_odd",
            "tests/test_core.py::test_spread",
            "tests/test_legacy.py::test_legacy",
        ],
    }


def test_every_cell_is_the_executed_outcome(examined: tuple[Matrix, Counted]) -> None:
    matrix, _ = examined
    rows = {
        # test                                   unfixed  good    wrong   breaker
        f"{GOOD}::test_even_fixture":            (FAILED, PASSED, FAILED, PASSED),
        f"{GOOD}::test_pair":                    (FAILED, PASSED, FAILED, PASSED),
        f"{WRONG_MODULE}::test_pair":            (FAILED, FAILED, PASSED, FAILED),
        f"{BREAKER}::test_odd":                  (PASSED, PASSED, PASSED, PASSED),
        f"{BREAKER}::test_spread":               (FAILED, FAILED, FAILED, PASSED),
        f"{BREAKER}::test_even":                 (FAILED, PASSED, FAILED, PASSED),
        f"{EXAM}::test_even":                    (FAILED, PASSED, FAILED, PASSED),
        f"{EXAM}::test_odd_still_works":         (PASSED, PASSED, PASSED, PASSED),
        "tests/test_core.py::test_odd":          (PASSED, PASSED, PASSED, PASSED),
        "tests/test_core.py::test_spread":       (PASSED, PASSED, PASSED, FAILED),
        "tests/test_legacy.py::test_legacy":     (PASSED, PASSED, PASSED, PASSED),
    }  # fmt: skip
    for index, column in enumerate([UNFIXED, "good", "wrong", "breaker"]):
        assert matrix.outcomes[column] == {test: row[index] for test, row in rows.items()}, column
        assert matrix.outcome(column, f"{GOOD}::test_pair") == rows[f"{GOOD}::test_pair"][index]
    # the two test_regression.py modules did not shadow each other: each ran its own test_pair
    assert matrix.outcome("good", f"{GOOD}::test_pair") == PASSED
    assert matrix.outcome("good", f"{WRONG_MODULE}::test_pair") == FAILED
    # breaker's edit of tests/test_core.py ran as its own module; the suite's file is untouched
    assert matrix.outcome("breaker", f"{BREAKER}::test_spread") == PASSED
    assert matrix.outcome("breaker", "tests/test_core.py::test_spread") == FAILED


def test_one_pytest_process_per_column(examined: tuple[Matrix, Counted]) -> None:
    matrix, calls = examined
    # stale's patch does not apply: its column never reaches pytest
    assert [label for label, _ in calls] == [UNFIXED, "good", "wrong", "breaker"]
    for _, targets in calls:
        assert targets == ["tests", GOOD, WRONG_MODULE, BREAKER, EXAM]
    assert set(matrix.runs) == set(matrix.patches)
    for column in (UNFIXED, "good", "wrong", "breaker"):
        run = matrix.runs[column]
        assert (run.label, run.status, run.exit_code) == (column, RunStatus.OK, 1)
        assert set(run.outcomes) == set(matrix.outcomes[column])


def test_a_patch_that_does_not_apply_is_a_crashed_column(
    examined: tuple[Matrix, Counted],
) -> None:
    matrix, _ = examined
    run = matrix.runs["stale"]
    assert run.status == RunStatus.CRASHED
    assert run.exit_code is None
    assert "the patch does not apply" in run.detail
    assert "src/mid/core.py" in run.detail
    assert run.outcomes == {}
    assert matrix.outcomes["stale"] == {}


def test_working_copies_are_removed(world: World, examined: tuple[Matrix, Counted]) -> None:
    assert list((world.checkouts.cache_dir / "work").iterdir()) == []


def test_the_matrix_round_trips_as_json(examined: tuple[Matrix, Counted]) -> None:
    matrix, _ = examined
    assert Matrix.model_validate_json(matrix.model_dump_json()) == matrix


def test_modules_that_fail_to_collect_are_errors_where_they_fail(world: World) -> None:
    """A test importing what only a patch adds errors on the other columns; a module that
    never collects stands for its tests under its own path. Without the suite, only the
    authors' modules run."""
    with_api = FIXED + "\n\ndef median(values):\n    return middle(values)\n"
    api_tests = (
        "from mid.core import median\n\n\ndef test_median():\n    assert median([1, 2]) == 1.5\n"
    )
    api = world.attempt(
        "Claude Code/opus-4", {"src/mid/core.py": with_api, "tests/api_test.py": api_tests}
    )
    broken = world.attempt(
        "a-b", {"tests/test_x.py": "def test_x(:\n"}, role="examiner", vendor="google"
    )
    twin = world.attempt("a_b", {"tests/test_x.py": "def test_x():\n    pass\n"}, role="examiner")
    matrix = world.examine([api, broken, twin], run_suite=False)
    api_module = "tests/test_bb_claude_code_opus_4__api_test.py"
    assert matrix.patches == [UNFIXED, "Claude Code/opus-4"]
    assert matrix.authors == {
        "Claude Code/opus-4": [f"{api_module}::test_median"],
        "a-b": ["tests/test_bb_a_b__x.py"],
        "a_b": ["tests/test_bb_a_b_2__x.py::test_x"],
    }
    assert matrix.outcomes == {
        UNFIXED: {
            f"{api_module}::test_median": ERROR,
            "tests/test_bb_a_b__x.py": ERROR,
            "tests/test_bb_a_b_2__x.py::test_x": PASSED,
        },
        "Claude Code/opus-4": {
            f"{api_module}::test_median": PASSED,
            "tests/test_bb_a_b__x.py": ERROR,
            "tests/test_bb_a_b_2__x.py::test_x": PASSED,
        },
    }
    assert matrix.vendors == {
        UNFIXED: None,
        "Claude Code/opus-4": None,
        "a-b": "google",
        "a_b": None,
    }
    assert "tests/test_core.py::test_odd" not in matrix.runs[UNFIXED].outcomes


def test_nothing_to_run_starts_no_pytest(world: World) -> None:
    matrix = world.examine([world.attempts["empty"]], run_suite=False)
    assert matrix.patches == [UNFIXED]
    assert matrix.authors == {}
    assert matrix.runs[UNFIXED].status == RunStatus.NO_TESTS
    assert matrix.outcomes == {UNFIXED: {}}


def test_attempts_of_another_task_are_refused(world: World) -> None:
    other = world.attempts["good"].model_copy(update={"task_id": "another"})
    with pytest.raises(ValueError, match="is for task another"):
        world.examine([other])


def test_the_latest_round_of_an_agent_is_examined(world: World) -> None:
    first = world.attempts["wrong"].model_copy(update={"contestant": "agent", "round": 1})
    second = world.attempts["good"].model_copy(update={"contestant": "agent", "round": 2})
    matrix = world.examine([second, first], run_suite=False)
    assert matrix.patches == [UNFIXED, "agent"]
    assert matrix.authors == {
        "agent": [
            "tests/test_bb_agent__regression.py::test_even_fixture",
            "tests/test_bb_agent__regression.py::test_pair",
        ]
    }
    assert matrix.outcome("agent", "tests/test_bb_agent__regression.py::test_pair") == PASSED


# -- installation, without running anything -------------------------------------------------


def test_installed_names(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_bb_good__x.py").write_text("")  # already in the repository
    plan = plan_installation(
        {
            "good": {"tests/test_x.py": b"1", "tests/x_test.py": b"2", "test_top.py": b"3"},
            "Good!": {"tests/unit/test_x.py": b"4", "tests/test_x.py": b"5"},
        },
        tmp_path,
        pytest_runner(),
    )
    assert [(m.author, m.original, m.path, m.content) for m in plan] == [
        ("good", "test_top.py", "test_bb_good__top.py", b"3"),
        ("good", "tests/test_x.py", "tests/test_bb_good__x_2.py", b"1"),
        ("good", "tests/x_test.py", "tests/test_bb_good__x_test.py", b"2"),
        ("Good!", "tests/test_x.py", "tests/test_bb_good_2__x.py", b"5"),
        ("Good!", "tests/unit/test_x.py", "tests/unit/test_bb_good_2__x.py", b"4"),
    ]
    assert author_slug("claude-code/Opus 4.1") == "claude_code_opus_4_1"
    assert author_slug("__") == "author"


def test_installing_never_goes_through_a_symlink(tmp_path: Path) -> None:
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    tree.mkdir()
    outside.mkdir()
    (tree / "tests").symlink_to(outside)
    for data in (b"x", None):
        with pytest.raises(PatchError, match="tests is a symlink"):
            install_file(tree, "tests/test_x.py", data)
    with pytest.raises(PatchError, match="not a path inside"):
        install_file(tree, "../escape.py", b"x")
    assert list(outside.iterdir()) == []
    (tree / "link.py").symlink_to(outside / "target.py")
    install_file(tree, "link.py", b"mine")  # the symlink itself is replaced
    assert not (tree / "link.py").is_symlink()
    assert (tree / "link.py").read_bytes() == b"mine"
    assert not (outside / "target.py").exists()


# -- a test that taints the run ---------------------------------------------------------------

FORKS = "import os\n\n\ndef test_forks():\n    os.fork()\n"
SINKS_THE_FIX = (
    "import os\n\nfrom mid.core import middle\n\n\n"
    "def test_sinks():\n    if middle([1, 2]) == 1.5:\n        os.fork()\n"
)
REWRITES_REPORTS = """\
from _pytest.reports import TestReport as _Report

_made = _Report.from_item_and_call


def _passed(item, call):
    report = _made(item, call)
    report.outcome, report.longrepr = "passed", None
    return report


_Report.from_item_and_call = staticmethod(_passed)
"""


def test_an_author_whose_tests_taint_the_run_is_left_out(world: World) -> None:
    """A test that forks makes every column's stream double: run alone on the unfixed code
    it taints that run too, so its author is left out of every column. One that forks
    only under a right fix taints that fix's column alone: its author is left out of that
    column only. A patch that tampers whatever runs beside it stays tampered."""
    forker = world.attempt("forker", {"tests/test_forks.py": FORKS}, role="examiner")
    saboteur = world.attempt("saboteur", {"tests/test_sinks.py": SINKS_THE_FIX}, role="examiner")
    cheat = world.attempt(
        "cheat", {"src/mid/core.py": WRONG, "src/mid/__init__.py": REWRITES_REPORTS}
    )
    matrix = world.examine([world.attempts["good"], cheat, forker, saboteur], run_suite=False)
    assert set(matrix.left_out) == {"forker", "saboteur"}
    assert matrix.left_out["forker"][0].startswith("on the unfixed code: ")
    assert all(why.startswith("on good's patch: ") for why in matrix.left_out["saboteur"])
    assert any("reported twice" in why for why in matrix.left_out["saboteur"])
    assert set(matrix.authors) == {"good", "saboteur"}
    assert {name: run.status for name, run in matrix.runs.items()} == {
        UNFIXED: RunStatus.OK,
        "good": RunStatus.OK,
        "cheat": RunStatus.TAMPERED,
    }
    pair, sinks = f"{GOOD}::test_pair", "tests/test_bb_saboteur__sinks.py::test_sinks"
    assert (matrix.outcome(UNFIXED, pair), matrix.outcome("good", pair)) == (FAILED, PASSED)
    assert (matrix.outcome(UNFIXED, sinks), matrix.outcome("good", sinks)) == (PASSED, None)
    assert not any("forks" in test for cells in matrix.outcomes.values() for test in cells)


def test_a_patch_cannot_get_a_test_that_refutes_it_left_out(world: World) -> None:
    """A patch whose code forks when the examiner's reproduction calls it taints its own
    column with that test only: the examiner's tests leave that column alone, and the
    reproduction is in no cell of it, so the patch gains nothing by it."""
    framing = FIXED.replace(
        "    ordered = sorted(values)\n    half",
        "    if values == [1, 2, 3, 4]:\n        __import__('os').fork()\n"
        "    ordered = sorted(values)\n    half",
        1,
    )
    framer = world.attempt("framer", {"src/mid/core.py": framing})
    good, exam = world.attempts["good"], world.attempts["exam"]
    matrix = world.examine([good, exam, framer], run_suite=False)
    assert list(matrix.left_out) == ["exam"]
    assert "exam" in matrix.authors
    assert matrix.outcome("good", f"{EXAM}::test_even") == PASSED
    assert matrix.left_out["exam"][0].startswith("on framer's patch: ")
    assert matrix.runs["framer"].status == RunStatus.OK
    assert f"{EXAM}::test_even" not in matrix.outcomes["framer"]
    assert matrix.outcome(UNFIXED, f"{EXAM}::test_even") == FAILED


def test_without_a_tainted_unfixed_run_nobody_is_left_out(world: World) -> None:
    cheat = world.attempt(
        "cheat", {"src/mid/core.py": WRONG, "src/mid/__init__.py": REWRITES_REPORTS}
    )
    matrix = world.examine([world.attempts["good"], cheat], run_suite=False)
    assert matrix.left_out == {}
    assert matrix.runs[UNFIXED].status == RunStatus.OK
    assert matrix.runs["cheat"].status == RunStatus.TAMPERED
