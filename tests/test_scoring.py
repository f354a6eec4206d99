"""Scoring against the hidden tests on the one-bug repository of ``test_crossexam``: real git,
real pytest under bubblewrap, the oracle computed for real."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bugbout.core.plumbing.bench import Bench
from bugbout.core.plumbing.trees.tree_files import install_fix_tests
from bugbout.core.score.scoring import score
from bugbout.core.store.race_records import Attempt, Score
from bugbout.core.store.records import Outcome, RunStatus
from bugbout.core.store.verdict_records import PatchResolution
from runners import pytest_runner
from test_crossexam import FIX_TESTS, FIXED, PROJECT, WRONG, World, build_world

PASSED, FAILED = Outcome.PASSED, Outcome.FAILED
EVEN, ODD, SPREAD = (
    "tests/test_core.py::test_even",
    "tests/test_core.py::test_odd",
    "tests/test_core.py::test_spread",
)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    yield from build_world(tmp_path_factory)


def scored(world: World, attempt: Attempt | None, **options: str) -> PatchResolution:
    return score(world.task, world.oracle, attempt, bench(world), **options)


def bench(world: World) -> Bench:
    return Bench(
        world.checkouts, world.environment, PROJECT, 120, world.confine, ("tests",), pytest_runner()
    )


def test_a_correct_patch_resolves(world: World) -> None:
    resolution = scored(world, world.attempts["good"])
    assert (resolution.task_id, resolution.contestant, resolution.key) == (
        world.task.id,
        "good",
        "good",
    )
    assert resolution.score == Score.RESOLVED
    assert resolution.fail_to_pass == {EVEN: PASSED}
    assert resolution.pass_to_pass_failing == []
    assert resolution.run is not None
    assert resolution.run.status == RunStatus.OK
    # only the task's test modules ran, in the fix's version: never the agent's tests
    assert resolution.run.outcomes == {ODD: PASSED, SPREAD: PASSED, EVEN: PASSED}


def test_a_wrong_patch_is_a_wrong_fix(world: World) -> None:
    resolution = scored(world, world.attempts["wrong"])
    assert resolution.score == Score.WRONG_FIX
    assert resolution.fail_to_pass == {EVEN: FAILED}
    assert resolution.pass_to_pass_failing == []


def test_a_fix_that_breaks_another_test(world: World) -> None:
    # breaker also edited test_spread to expect its behaviour: that edit is never applied
    resolution = scored(world, world.attempts["breaker"])
    assert resolution.score == Score.FIXED_BUT_BROKE
    assert resolution.fail_to_pass == {EVEN: PASSED}
    assert resolution.pass_to_pass_failing == [SPREAD]
    assert resolution.run is not None
    assert resolution.run.outcomes[SPREAD] == FAILED


def test_no_fix(world: World) -> None:
    for attempt in (world.attempts["empty"], world.attempts["exam"]):
        resolution = scored(world, attempt)
        assert resolution == PatchResolution(
            task_id=world.task.id,
            contestant=attempt.contestant,
            key=attempt.key,
            score=Score.NO_FIX,
        )
    assert scored(world, None) == PatchResolution(
        task_id=world.task.id, contestant="", score=Score.NO_FIX
    )
    assert scored(world, None, contestant="majority").contestant == "majority"


def test_a_patch_that_does_not_apply_is_a_wrong_fix_that_says_why(world: World) -> None:
    resolution = scored(world, world.attempts["stale"])
    assert resolution.score == Score.WRONG_FIX
    assert resolution.fail_to_pass == {EVEN: None}
    assert resolution.pass_to_pass_failing == []
    assert resolution.run is not None
    assert resolution.run.status == RunStatus.CRASHED
    assert "the patch does not apply" in resolution.run.detail
    assert "src/mid/core.py" in resolution.run.detail


def test_only_source_changes_are_applied(world: World) -> None:
    """Test edits that would crash the run, and files outside the package, are left out."""
    cheat = world.attempt(
        "cheat",
        {
            "src/mid/core.py": FIXED,
            "tests/conftest.py": "raise SystemExit('the test edits were applied')\n",
            "pyproject.toml": "this is not toml",
        },
    )
    assert cheat.patch.tests and cheat.patch.other
    assert scored(world, cheat).score == Score.RESOLVED
    almost = world.attempt("almost", {"src/mid/core.py": WRONG, "tests/test_core.py": FIX_TESTS})
    assert scored(world, almost).score == Score.WRONG_FIX


def test_a_patch_is_scored_whatever_the_attempt_status(world: World) -> None:
    assert scored(world, world.attempts["late"]).score == Score.RESOLVED


def test_a_task_without_ground_truth_is_not_scored(world: World) -> None:
    oracle = world.oracle.model_copy(update={"status": "no-fail-to-pass"})
    with pytest.raises(ValueError, match="no ground truth"):
        score(world.task, oracle, world.attempts["good"], bench(world))


def test_the_fix_tests_are_installed_as_the_oracle_did(world: World) -> None:
    tree = world.checkouts.working_copy(world.task.parent, world.checkouts.cache_dir / "t")
    assert (tree / "tests" / "test_legacy.py").exists()
    install_fix_tests(world.task, world.git, tree)
    assert not (tree / "tests" / "test_legacy.py").exists()
    assert (tree / "tests" / "test_core.py").read_text() == FIX_TESTS
    world.checkouts.remove(tree)


def test_scoring_leaves_no_working_copy(world: World) -> None:
    scored(world, world.attempts["wrong"])
    assert list((world.checkouts.cache_dir / "work").iterdir()) == []
