"""Selection by function is sound on real suites: click's, and markupsafe's, whose code
is mostly in its package's ``__init__.py``, with one-function patches that break
behaviour (a function that raises, one that returns ``None``), each run against the
whole suite. Every test that fails with the patch and passed on the unfixed code is in
the patch's selection, and the selection is a small share of the suite."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import Environment, EnvironmentRequest
from bugbout.core.plumbing.selection.affected import (
    BaseRun,
    changed_in_functions,
    read_coverage,
    select,
)
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.plumbing.trees.patch import diff_trees
from bugbout.core.store.race_records import ChangeArea
from bugbout.core.store.records import Outcome, RunStatus, TestRun
from bugbout.testing.breaks import broken
from runners import pytest_runner


@dataclass(frozen=True)
class Real:
    """A real project at a commit, the patches that break it, and a file most of its
    suite runs a function of (what selecting by file would run)."""

    mirror: str
    commit: str
    project: ProjectSettings
    breaks: dict[tuple[str, str], str]
    """(file, function): how; from a function most tests run to one few tests reach."""
    busy: str


REAL = {
    "click": Real(
        "pallets+click",
        "2c8cd3ac",
        ProjectSettings(source="src/click", tests="tests", pytest_args=("-m", "not stress")),
        {
            ("src/click/core.py", "Context.lookup_default"): "raise",
            ("src/click/parser.py", "_OptionParser._match_long_opt"): "return",
            ("src/click/types.py", "Choice.get_invalid_choice_message"): "return",
            ("src/click/utils.py", "_make_default_short_help"): "raise",
        },
        "src/click/parser.py",
    ),
    "markupsafe": Real(
        "pallets+markupsafe",
        "1251593",
        ProjectSettings(source="src/markupsafe", tests="tests"),
        {
            ("src/markupsafe/__init__.py", "Markup.__mod__"): "raise",
            ("src/markupsafe/__init__.py", "escape_silent"): "return",
            ("src/markupsafe/__init__.py", "Markup.striptags"): "raise",
            ("src/markupsafe/_native.py", "_escape_inner"): "return",
        },
        "src/markupsafe/__init__.py",
    ),
}


def no_confinement(argv: list[str], tree: Path, writable: tuple[Path, ...]) -> list[str]:
    return argv


def passing(run: TestRun) -> set[str]:
    return {test for test, outcome in run.outcomes.items() if outcome == Outcome.PASSED}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(REAL))
def test_every_regression_the_whole_suite_finds_is_selected(name: str, tmp_path: Path) -> None:
    real = REAL[name]
    mirror = Path("/work/.mirror", real.mirror, "repo")
    if not mirror.is_dir():
        pytest.fail(f"no {name} mirror at {mirror}: fetch github:{real.mirror.replace('+', '/')}")
    tree = tmp_path / name
    subprocess.run(["git", "clone", "-q", str(mirror), str(tree)], check=True)
    subprocess.run(["git", "-C", str(tree), "checkout", "-q", real.commit], check=True)
    project = real.project
    environment: Environment = (
        make_plugins()
        .create("environment", "interpreter")
        .build(EnvironmentRequest(project=project, tree=tree, home=tmp_path / "home"))
    )

    def suite(where: Path, chunks: list[bytes] | None = None) -> TestRun:
        run = run_tests(
            environment, where, [project.tests], project=project, label="t", timeout=900,
            confine=no_confinement, coverage=chunks,
        )  # fmt: skip
        assert run.status == RunStatus.OK, run.detail
        return run

    chunks: list[bytes] = []
    base = BaseRun(task_id=name, run=suite(tree, chunks), coverage=read_coverage(chunks))
    assert passing(base.run) == passing(suite(tree))  # the tracer changes no outcome
    assert len(base.coverage.tests) > len(base.run.outcomes) / 2
    shares = []
    for (path, function), how in real.breaks.items():
        patched = tmp_path / "patched"
        shutil.copytree(tree, patched, ignore=shutil.ignore_patterns(".git"))
        (patched / path).write_text(broken((tree / path).read_text(), function, how))
        patch = diff_trees(tree, patched, source=project.source, tests=project.tests)
        scope = changed_in_functions(
            tree, patch.source, patch.area(ChangeArea.SOURCE), pytest_runner()
        )
        selection = select(base, scope, suite=(project.tests,))
        assert not selection.everything, (function, selection.everything)
        regressions = passing(base.run) - passing(suite(patched))
        assert regressions, f"breaking {function} fails no test"
        missed = {test for test in regressions if not selection.runs(test)}
        assert not missed, (function, sorted(missed)[:5])
        shares.append(sum(map(selection.runs, base.run.outcomes)) / len(base.run.outcomes))
        shutil.rmtree(patched)
    assert sorted(shares)[len(shares) // 2] < 0.5, shares
    assert _file_share(base, real.busy) > 0.4  # what selecting by file ran


def _file_share(base: BaseRun, path: str) -> float:
    """The share of the suite a change to ``path`` would run, selecting by file: the
    suite's tests whose map names a function of the file."""
    tests = base.run.outcomes
    mapped = [test for test in tests if test in base.coverage.tests]
    return sum(path in base.coverage.files_of(test) for test in mapped) / len(tests)
