"""Code older than PEP 479 (a generator ended by ``raise StopIteration``) fails the same
before and after its fix on Python 3.7 and later: the reason names that, from real runs."""

from __future__ import annotations

from pathlib import Path

from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import EnvironmentRequest
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.store.records import Task, TaskIssue
from bugbout.core.truth.oracle import judge_runs

PROJECT = ProjectSettings(source="pkg", tests="tests")
TOKENS = """\
def tokens(items):
    for item in items:
        if item is None:
            raise StopIteration
        yield item
"""
TEST = """\
from pkg import tokens


def test_stops_at_none():
    assert list(tokens([1, None, 2])) == [1]
"""


def test_a_generator_ended_by_raise_stopiteration_is_named(
    plugins: Plugins, tmp_path: Path
) -> None:
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "tests").mkdir()
    (tree / "pkg" / "__init__.py").write_text(TOKENS)
    (tree / "tests" / "test_tokens.py").write_text(TEST)
    builder = plugins.create("environment", "interpreter")
    environment = builder.build(
        EnvironmentRequest(project=PROJECT, tree=tree, home=tmp_path / "home")
    )
    runs = [
        run_tests(
            environment, tree, ["tests/test_tokens.py"], project=PROJECT, label=label, timeout=120
        )
        for label in ("before-1", "after-1")
    ]
    task = Task(
        id="t", sha="s", parent="p", date="2015-03-01T00:00:00+00:00", title="Fix",
        issue=TaskIssue(number=1), source_files=["pkg/__init__.py"],
        test_files=["tests/test_tokens.py"],
    )  # fmt: skip
    oracle = judge_runs(task, runs)
    assert oracle.status == "no-fail-to-pass"
    assert oracle.reason is not None
    assert "1 tests failed before and after the fix with " in oracle.reason
    assert "(PEP 479): its era needs Python 3.6 or older)" in oracle.reason
