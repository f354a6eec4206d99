"""Following a package through history: its past locations, the package `init` picks, and
mining over every location."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import moved_history
from bugbout.config.layout import find_packages
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings, ProjectSettings
from bugbout.core.mine.mining import MiningRequest
from bugbout.core.mine.package_history import PackageHistory, choose, trace_packages
from bugbout.core.plumbing.environments.environment import EnvironmentRequest
from bugbout.core.plumbing.selection.affected import read_coverage
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.plumbing.trees.patch import ChangeArea, classify
from bugbout.core.store.records import Outcome
from bugbout.onboarding.init import find_source
from bugbout.plugins.miners.git_history import GitHistoryMiner, GitHistoryOptions


@pytest.fixture(scope="module")
def moved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    path = tmp_path_factory.mktemp("moved") / "repo"
    return path, moved_history.build_moved(path)


def init(repo: Path) -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, "-m", "bugbout", "init"],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": os.defpath},  # no agent found: nothing else to write
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    project = yaml.safe_load((repo / "bugbout.yaml").read_text())["project"]
    (repo / "bugbout.yaml").unlink()
    assert isinstance(project, dict)
    return project


def test_a_moved_package_is_traced_to_where_it_was(moved: tuple[Path, dict[str, str]]) -> None:
    repo, _ = moved
    with Git(repo) as git:
        packages = find_packages(git.run("ls-files", "-z").split("\0"))
        assert packages == ["src/calc", "scratch"]
        calc, scratch = trace_packages(git, "HEAD", packages)
    assert calc.past == ["calc"]  # not scratch/: one of its four modules moved in
    assert calc.commits == 5  # every commit but the README's
    assert scratch.past == [] and scratch.commits == 2
    assert [package.path for package in choose([scratch, calc])] == ["src/calc"]


def test_without_history_the_package_named_like_the_project_is_picked() -> None:
    found = [PackageHistory("alpha"), PackageHistory("src/mypkg"), PackageHistory("beta")]
    assert [package.path for package in choose(found, preferred="mypkg")] == ["src/mypkg"]
    assert [package.path for package in choose(found)] == ["alpha"]


def test_init_writes_every_location_and_tasks_are_mined_under_all(
    moved: tuple[Path, dict[str, str]],
) -> None:
    repo, sha = moved
    project = init(repo)
    assert project["source"] == ["src/calc", "calc"]
    with Git(repo) as git:
        assert find_source(git, repo, "src/calc/") == (["src/calc"], ["calc"])

    def mined(source: object) -> list[str]:
        request = MiningRequest(
            repository=repo,
            project=ProjectSettings.model_validate({"source": source}),
        )
        return [task.sha for task in GitHistoryMiner(GitHistoryOptions()).mine(request).tasks]

    assert mined(project["source"]) == [sha["after"], sha["before"]]
    assert mined("src/calc") == [sha["after"]]  # the fix made at calc/ changes no source


def test_init_picks_the_package_the_history_changes(tmp_path: Path) -> None:
    moved_history.build_two(tmp_path)  # src/attrs is named like the project
    with Git(tmp_path) as git:
        assert find_source(git, tmp_path) == (["src/attr"], [])


def test_the_source_is_one_directory_or_several() -> None:
    one = ProjectSettings(source="src/pkg/")
    assert one.source == ("src/pkg",)
    assert '"source":"src/pkg"' in one.model_dump_json()  # stored results keep their keys
    several = ProjectSettings.model_validate({"source": ["src/pkg", "pkg", "src/pkg"]})
    assert several.source == ("src/pkg", "pkg")
    assert several.import_roots == ("src", ".")
    for bad in ([], ["pkg", "../elsewhere"]):
        with pytest.raises(ValueError, match=r"e\.g\. 'src/mypkg'"):
            ProjectSettings.model_validate({"source": bad})


def test_a_patch_to_any_location_is_a_source_change() -> None:
    source = ("src/pkg", "pkg")
    assert classify("pkg/core.py", source=source, tests="tests") is ChangeArea.SOURCE
    assert classify("src/pkg/core.py", source=source, tests="tests") is ChangeArea.SOURCE
    assert classify("other/core.py", source=source, tests="tests") is ChangeArea.OTHER


def test_a_tree_from_before_the_move_imports_and_is_traced(
    plugins: Plugins, tmp_path: Path
) -> None:
    project = ProjectSettings.model_validate({"source": ["pkg", "src/pkg"], "tests": "tests"})
    tree = tmp_path / "tree"  # as it was: the package under src/, where it is no more
    for name, text in {
        "src/pkg/__init__.py": "",
        "src/pkg/core.py": "def one():\n    return 1\n",
        "tests/test_core.py": "from pkg.core import one\n\n\ndef test_one():\n    assert one()\n",
    }.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(text)
    request = EnvironmentRequest(project=project, tree=tree, home=tmp_path / "home")
    environment = plugins.create("environment", "interpreter").build(request)
    traced: list[bytes] = []
    run = run_tests(
        environment, tree, ["tests"], project=project, label="t", timeout=60, coverage=traced
    )
    assert run.outcomes == {"tests/test_core.py::test_one": Outcome.PASSED}
    coverage = read_coverage(traced)
    assert coverage.files_of("tests/test_core.py::test_one") == {"src/pkg/core.py"}


def test_doctor_asks_for_one_of_the_directories_today(moved: tuple[Path, dict[str, str]]) -> None:
    from bugbout.onboarding.doctor.machine import repository_checks

    def check(source: list[str]) -> str:
        project = ProjectSettings.model_validate({"source": source})
        checks = repository_checks(BoutSettings(project=project, root=moved[0]))
        return next(c.line for c in checks if c.name == "project.source")

    assert check(["src/calc", "calc"]) == "ok    project.source: src/calc exists"
    assert check(["lib/calc", "calc"]).startswith(
        "FAIL  project.source: none of lib/calc, calc is a directory of "
    )
