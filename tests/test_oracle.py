"""Ground truth on the synthetic history: exact fail-to-pass, pass-to-pass and unstable."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout import hookimpl
from bugbout.core.contract.manager import Plugins
from bugbout.core.pipeline import compute_oracles, mine_tasks
from bugbout.core.store.records import (
    Oracle,
    OracleSet,
    Outcome,
    RunStatus,
    Task,
    TaskIssue,
    TestRun,
)
from bugbout.core.store.store import ORACLES, TASKS, Store
from bugbout.core.truth.oracle import first_error, judge_runs
from history import calc_settings


@pytest.fixture(scope="module")
def ground_truth(
    calc_repo: tuple[Path, dict[str, str]], tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Oracle], dict[str, str], Store]:
    """Mine and compute every oracle once, with the current interpreter."""
    from bugbout.core.contract.manager import make_plugins

    repo, sha = calc_repo
    settings = calc_settings(repo)
    store = Store(tmp_path_factory.mktemp("store") / ".bugbout")
    plugins = make_plugins(entry_points=False)
    plugins.register(_OracleListener(), name="listener")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BUGBOUT_HOME", str(tmp_path_factory.mktemp("home")))
        tasks = mine_tasks(settings, plugins, store)
        oracles = compute_oracles(settings, plugins, store, tasks)
    by_scenario = {
        name: oracles.root[sha[name][:12]] for name in sha if sha[name][:12] in oracles.root
    }
    return by_scenario, sha, store


class _OracleListener:
    seen: list[str] = []

    @hookimpl
    def bugbout_after_oracle(self, oracle: Oracle) -> None:
        self.seen.append(oracle.task_id)


@pytest.mark.slow
def test_after_oracle_hook_sees_every_computed_oracle(
    ground_truth: tuple[dict[str, Oracle], dict[str, str], Store],
) -> None:
    oracles, _, _ = ground_truth
    assert sorted(_OracleListener.seen) == sorted(oracle.task_id for oracle in oracles.values())


@pytest.mark.slow
def test_clean_fix(ground_truth: tuple[dict[str, Oracle], dict[str, str], Store]) -> None:
    oracle = ground_truth[0]["clean"]
    assert oracle.status == "ok"
    assert oracle.fail_to_pass == ["tests/test_div.py::test_div_by_zero"]
    assert oracle.pass_to_pass == ["tests/test_div.py::test_div"]
    assert oracle.unstable == []
    assert [run.label for run in oracle.runs] == ["before-1", "before-2", "after-1", "after-2"]


@pytest.mark.slow
def test_fix_whose_test_already_passed_is_not_scored(
    ground_truth: tuple[dict[str, Oracle], dict[str, str], Store],
) -> None:
    oracles, sha, store = ground_truth
    oracle = oracles["already_passing"]
    assert oracle.status == "no-fail-to-pass"
    assert oracle.fail_to_pass == []
    assert oracle.pass_to_pass == ["tests/test_fmt.py::test_fmt"]
    stored = store.read(TASKS, type(_taskset()))
    assert stored is not None
    task = stored.get(sha["already_passing"][:12])
    assert task.scored is False
    assert task.reason == (
        "no test failed before the fix and passed after it: the test the fix added or "
        "changed passed before it too: in this environment no test in its history fails without "
        "the fix"
    )


@pytest.mark.slow
def test_modified_module_changed_test_is_fail_to_pass(
    ground_truth: tuple[dict[str, Oracle], dict[str, str], Store],
) -> None:
    oracle = ground_truth[0]["modified_module"]
    assert oracle.fail_to_pass == [
        "tests/test_ops.py::test_sub",
        "tests/test_ops.py::test_sub_negative",
    ]
    assert oracle.pass_to_pass == ["tests/test_ops.py::test_add"]


@pytest.mark.slow
def test_gained_parametrize_case_is_fail_to_pass(
    ground_truth: tuple[dict[str, Oracle], dict[str, str], Store],
) -> None:
    oracle = ground_truth[0]["parametrize"]
    assert oracle.fail_to_pass == ["tests/test_clamp.py::test_clamp[11-10]"]
    assert oracle.pass_to_pass == [
        "tests/test_clamp.py::test_clamp[-1-0]",
        "tests/test_clamp.py::test_clamp[5-5]",
    ]


@pytest.mark.slow
def test_ids_that_change_every_run_are_unstable(
    ground_truth: tuple[dict[str, Oracle], dict[str, str], Store],
) -> None:
    oracle = ground_truth[0]["unstable"]
    assert oracle.status == "ok"
    assert oracle.fail_to_pass == ["tests/test_fmt_random.py::test_fmt_float"]
    assert len(oracle.unstable) == 2
    assert all(
        name.startswith("tests/test_fmt_random.py::test_fmt_any[") for name in oracle.unstable
    )
    assert not set(oracle.unstable) & set(oracle.pass_to_pass)


@pytest.mark.slow
def test_merge_oracle_and_store_round_trip(
    ground_truth: tuple[dict[str, Oracle], dict[str, str], Store],
) -> None:
    oracles, _, store = ground_truth
    assert oracles["merge"].fail_to_pass == ["tests/test_absval.py::test_negative"]
    stored = store.read(ORACLES, OracleSet)
    assert stored is not None
    assert stored.root[oracles["merge"].task_id] == oracles["merge"]


@pytest.mark.slow
def test_oracles_are_reused_when_nothing_changed(
    calc_repo: tuple[Path, dict[str, str]],
    ground_truth: tuple[dict[str, Oracle], dict[str, str], Store],
    plugins: Plugins,
) -> None:
    repo, _ = calc_repo
    _, _, store = ground_truth
    before = store.path(ORACLES).stat().st_mtime_ns
    tasks = store.read(TASKS, type(_taskset()))
    assert tasks is not None
    compute_oracles(calc_settings(repo), plugins, store, tasks)
    assert store.path(ORACLES).stat().st_mtime_ns == before


def _taskset():  # type: ignore[no-untyped-def]
    from bugbout.core.store.records import TaskSet

    return TaskSet()


def _task() -> Task:
    return Task(
        id="t", sha="s", parent="p", date="2024-01-01T00:00:00+00:00", title="Fix",
        issue=TaskIssue(number=1), source_files=["a.py"], test_files=["tests/test_a.py"],
    )  # fmt: skip


def run(label: str, status: RunStatus = RunStatus.OK, **outcomes: str) -> TestRun:
    return TestRun(
        label=label,
        status=status,
        outcomes={name.replace("__", "::"): Outcome(value) for name, value in outcomes.items()},
    )


def test_absent_before_because_module_failed_to_collect_is_fail_to_pass() -> None:
    before = run("before", RunStatus.COLLECTION_FAILED)
    before.collection_errors = {"tests/test_a.py": "ImportError: cannot import name 'x'"}
    after = {"tests/test_a.py__test_x": "passed"}
    oracle = judge_runs(_task(), [before, run("after-1", **after), run("after-2", **after)])
    assert oracle.fail_to_pass == ["tests/test_a.py::test_x"]


def test_absent_before_without_a_collection_error_is_not_fail_to_pass() -> None:
    after = {"tests/test_a.py__test_x": "passed"}
    oracle = judge_runs(_task(), [run("before"), run("after-1", **after), run("after-2", **after)])
    assert oracle.fail_to_pass == []
    assert oracle.status == "no-fail-to-pass"


def test_errors_count_as_failures_and_flaky_outcomes_are_set_aside() -> None:
    oracle = judge_runs(
        _task(),
        [
            run(
                "before", tests__a="error", tests__b="failed", tests__c="passed", tests__d="failed"
            ),
            run(
                "after-1",
                tests__a="passed",
                tests__b="passed",
                tests__c="passed",
                tests__d="failed",
            ),
            run(
                "after-2",
                tests__a="passed",
                tests__b="failed",
                tests__c="passed",
                tests__d="failed",
            ),
        ],
    )
    assert oracle.fail_to_pass == ["tests::a"]
    assert oracle.unstable == ["tests::b"]
    assert oracle.pass_to_pass == ["tests::c"]
    assert oracle.fail_on_base == ["tests::d"]


def test_a_test_flaky_before_the_fix_is_unstable_not_fail_to_pass() -> None:
    """Every before run must agree, as every after run must: one that fails once and
    passes once before the fix is not fixed by it."""
    after = {"tests__a": "passed", "tests__b": "passed", "tests__c": "failed"}
    oracle = judge_runs(
        _task(),
        [
            run("before-1", tests__a="failed", tests__b="failed", tests__c="failed"),
            run("before-2", tests__a="passed", tests__b="failed", tests__c="error"),
            run("after-1", **after),
            run("after-2", **after),
        ],
    )
    assert oracle.fail_to_pass == ["tests::b"]
    assert oracle.unstable == ["tests::a", "tests::c"]


def test_every_before_run_is_judged_like_the_first() -> None:
    after = {"tests/test_a.py__test_x": "passed"}
    uncollected = run("before-2", RunStatus.COLLECTION_FAILED)
    uncollected.collection_errors = {"tests/test_a.py": "ImportError: cannot import name 'x'"}
    runs = [run("before-1", **{"tests/test_a.py__test_x": "failed"}), uncollected,
            run("after-1", **after)]  # fmt: skip
    oracle = judge_runs(_task(), runs)  # failed, then not collected (error): not the same
    assert (oracle.status, oracle.unstable) == ("no-fail-to-pass", ["tests/test_a.py::test_x"])
    runs[0] = run("before-1", RunStatus.COLLECTION_FAILED)
    runs[0].collection_errors = uncollected.collection_errors
    assert judge_runs(_task(), runs).fail_to_pass == ["tests/test_a.py::test_x"]
    runs[1] = run("before-2", RunStatus.TIMEOUT)
    assert judge_runs(_task(), runs).reason == (
        "the before-2 run timed out: the whole run took longer than tasks.timeout, with no "
        "one test past project.test-timeout (raise tasks.timeout if the suite is just slow)"
    )


def test_an_after_run_that_cannot_collect_is_an_environment_error() -> None:
    broken = run("after-1", RunStatus.COLLECTION_FAILED)
    broken.collection_errors = {"tests/test_a.py": "ModuleNotFoundError: No module named 'numpy'"}
    oracle = judge_runs(_task(), [run("before"), broken, run("after-2", tests__a="passed")])
    assert oracle.status == "environment-error"
    assert "numpy" in (oracle.reason or "")


def test_a_timed_out_run_is_an_environment_error() -> None:
    oracle = judge_runs(_task(), [run("before", RunStatus.TIMEOUT), run("after-1"), run("after-2")])
    assert oracle.status == "environment-error"
    assert "timed out" in (oracle.reason or "")


@pytest.mark.parametrize("which", ["before", "after-1"])
def test_a_run_that_ran_no_test_is_never_evidence(which: str) -> None:
    """pytest exiting without running a test (exit 5) is an environment error with the
    real first error, never a no-fail-to-pass."""
    after = {"tests/test_a.py__test_x": "passed"}
    runs = [run("before", tests__test_a_py__test_x="failed"), run("after-1", **after),
            run("after-2", **after)]  # fmt: skip
    empty = run(which, RunStatus.NO_TESTS)
    empty.detail = (
        "ImportError while loading conftest '/x/tests/conftest.py'.\n"
        "tests/conftest.py:1: in <module>\n    import simplejson\n"
        "E   ModuleNotFoundError: No module named 'simplejson'\n"
    )
    runs = [empty if r.label == which else r for r in runs]
    oracle = judge_runs(_task(), runs)
    assert oracle.status == "environment-error"
    assert oracle.reason == (
        f"the {which} run ran no test: ImportError while loading conftest '/x/tests/conftest.py'."
    )


def test_first_error_names_the_error_not_the_last_line() -> None:
    detail = "collected 0 items\nE   ModuleNotFoundError: No module named 'x'\nhint: y\n"
    assert first_error(detail) == "ModuleNotFoundError: No module named 'x'"
    assert first_error("ERROR: usage: pytest [options]\nmore\n") == "ERROR: usage: pytest [options]"
    assert first_error("Exception: boom\n") == "Exception: boom"
    assert first_error("nothing special\nthe end\n") == "the end"


def test_no_fail_to_pass_names_the_near_misses() -> None:
    before = run("before", tests__a="failed", tests__b="failed", tests__c="passed")
    after = {"tests__a": "skipped", "tests__b": "failed", "tests__c": "passed"}
    oracle = judge_runs(_task(), [before, run("after-1", **after), run("after-2", **after)])
    assert oracle.status == "no-fail-to-pass"
    assert oracle.reason == (
        "no test failed before the fix and passed after it: tests::a was skipped after the "
        "fix; tests::b failed after the fix too"
    )


@pytest.mark.slow
def test_ray_workers_compute_the_same_oracles(
    calc_repo: tuple[Path, dict[str, str]],
    ground_truth: tuple[dict[str, Oracle], dict[str, str], Store],
    tmp_path: Path,
) -> None:
    """Ground truth dispatched to Ray workers, two tasks at a time, equals the local one."""
    from bugbout.core.contract.manager import make_plugins
    from bugbout.core.contract.settings import PluginChoice

    repo, _ = calc_repo
    local, _, local_store = ground_truth
    settings = calc_settings(repo)
    settings = settings.model_copy(
        update={
            "executor": PluginChoice.model_validate({"name": "ray", "num-cpus": 2}),
            "tasks": settings.tasks.model_copy(update={"jobs": 2}),
        }
    )
    store = Store(tmp_path / ".bugbout")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BUGBOUT_HOME", str(tmp_path / "home"))
        plugins = make_plugins(entry_points=False)
        tasks = mine_tasks(settings, plugins, store)
        remote = compute_oracles(settings, plugins, store, tasks)
    expected = local_store.read(ORACLES, OracleSet)
    assert expected is not None
    fields = {"status", "fail_to_pass", "pass_to_pass", "fail_on_base"}

    def seen(oracles: OracleSet) -> dict[str, object]:  # unstable ids are random: count them
        return {k: (o.model_dump(include=fields), len(o.unstable)) for k, o in oracles.root.items()}

    assert seen(remote) == seen(expected)
    assert set(remote.root) >= {o.task_id for o in local.values()}


def test_a_task_of_modified_tests_needs_one_of_them_fail_to_pass() -> None:
    case, other = "tests/test_a.py::test_x[bad]", "tests/test_b.py::test_z"

    def runs(after: str) -> list[TestRun]:
        before = TestRun(
            label="before",
            status=RunStatus.OK,
            outcomes={case: Outcome.FAILED, other: Outcome.FAILED},
        )
        return [before] + [
            TestRun(
                label=f"after-{n}",
                status=RunStatus.OK,
                outcomes={case: Outcome(after), other: Outcome.PASSED},
            )
            for n in (1, 2)
        ]

    task = _task()
    task.modified_tests = ["tests/test_a.py::test_x"]
    assert judge_runs(task, runs("passed")).status == "ok"  # a case of the modified test
    oracle = judge_runs(task, runs("failed"))
    assert oracle.status == "no-fail-to-pass"
    assert oracle.reason == (
        "the fix only changed existing tests, and none of them failed before it and passed "
        "after it (tests/test_a.py::test_x)"
    )
    assert oracle.fail_to_pass == [other]  # another module's test does not make the task
    task.added_tests = ["tests/test_b.py::test_z"]
    assert judge_runs(task, runs("failed")).status == "ok"  # an added test is proof enough
