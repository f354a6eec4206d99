"""A fix whose tests fail identically before and after it for the environment's sake:
its reason names the environment failure, not only the near misses."""

from __future__ import annotations

from dataclasses import replace

from bugbout.core.plumbing.environments.environment import lacking
from bugbout.core.store.records import Outcome, RunStatus, Task, TaskIssue, TestRun
from bugbout.core.truth.oracle import judge_runs

MISSING = "ModuleNotFoundError: No module named 'cryptography.hazmat.bindings._constant_time'"
PYTHON2 = "NameError: name 'unicode' is not defined"


def _task() -> Task:
    return Task(
        id="t", sha="s", parent="p", date="2016-08-07T00:00:00+00:00", title="Fix",
        issue=TaskIssue(number=1), source_files=["jwt/a.py"], test_files=["tests/test_a.py"],
    )  # fmt: skip


def _run(label: str, failures: dict[str, str], passed: tuple[str, ...] = ()) -> TestRun:
    outcomes = {name: Outcome.FAILED for name in failures}
    outcomes |= {name: Outcome.PASSED for name in passed}
    return TestRun(label=label, status=RunStatus.OK, outcomes=outcomes, failures=failures)


def _judge(before: dict[str, str], after: dict[str, str]) -> str:
    runs = [_run("before-1", before, ("t::ok",)), _run("before-2", before, ("t::ok",))]
    runs += [_run("after-1", after, ("t::ok",)), _run("after-2", after, ("t::ok",))]
    oracle = judge_runs(_task(), runs)
    assert oracle.status == "no-fail-to-pass"
    assert oracle.reason is not None
    return oracle.reason


def test_a_module_missing_before_and_after_is_an_environment_failure() -> None:
    before = {"t::rsa": MISSING, "t::ec": MISSING, "t::new": "TypeError: Expecting a PEM key."}
    after = {"t::rsa": MISSING, "t::ec": MISSING, "t::new": MISSING}
    assert _judge(before, after).endswith(
        f"; an environment failure explains it: 2 tests failed before and after the fix with "
        f"{MISSING} (the environment lacks that module, or has its package without its "
        "compiled parts)"
    )


def test_a_python_2_builtin_missing_is_the_interpreter() -> None:
    before = {"t::a": PYTHON2, "t::b": PYTHON2, "t::c": "TypeError: a bytes-like object"}
    assert _judge(before, dict(before)).endswith(
        f"; an environment failure explains it: 2 tests failed before and after the fix with "
        f"{PYTHON2} (the code is Python 2's, and the interpreter Python 3)"
    )


def test_the_projects_own_failures_are_not_the_environments() -> None:
    same = {"t::a": "AssertionError: 1 != 2", "t::b": "NameError: name 'decode' is not defined"}
    reason = _judge(same, dict(same))
    assert "environment" not in reason
    assert reason.startswith("no test failed before the fix and passed after it: ")


def test_an_import_failing_only_after_the_fix_is_not_named() -> None:
    assert "environment" not in _judge({"t::a": "AssertionError: no"}, {"t::a": MISSING})


def test_a_podman_environment_without_its_test_extras_says_so_in_a_reason() -> None:
    """As a uv one does: the reason names what the environment lacks."""
    from bugbout.plugins.environments.podman import PodmanEnvironment

    fields = dict(image="i", podman="podman", config={}, url=None, base="debian:bookworm")
    environment = PodmanEnvironment(
        **fields, python_version="3.11.9", exclude_newer=None, key="k", import_roots=(),
        test_extras_error="no version of nosuch",
    )  # fmt: skip
    assert lacking(environment) == (
        "; an environment failure may explain it: the environment lacks declared test "
        "extras (did not resolve: no version of nosuch)"
    )
    assert "without declared test extras (did not resolve" in environment.description
    assert lacking(replace(environment, test_extras_error=None)) == ""
