"""Era fidelity: a resolution held to a date that quietly took an older release is found
by the index's upload dates and repaired by exempting the dependency whose releases all
came later. Against a package index served on 127.0.0.1 (wheels built here), never PyPI."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
from pathlib import Path

import pytest

from bugbout.core.contract.errors import EnvironmentFailure
from bugbout.core.contract.settings import BoutSettings, ProjectSettings
from bugbout.core.plumbing.environments.backtrack import (
    PYTHON,
    Backtrack,
    check_era,
    find_backtracks,
    installed,
    that_matter,
    unrepaired_note,
)
from bugbout.core.plumbing.environments.environment import EnvironmentRequest, resolved
from bugbout.core.plumbing.environments.interpreters import available_interpreters
from bugbout.core.plumbing.environments.package_index import PackageIndex
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.store.records import Exemption, Task, TaskIssue
from bugbout.core.truth.oracle import compute_oracle
from bugbout.plugins.environments.uv import MARKER, UvBuilder, UvOptions
from bugbout.testing import RepositoryBuilder
from local_index import Wheel, serve
from runners import pytest_runner

DATE = "2019-10-01"
OLD = Wheel("depa", "1.0", "2019-03-01T10:00:00Z")
NEW = Wheel("depa", "2.0", "2019-08-01T10:00:00Z", requires=("depb>=1.0",))
LATE = Wheel("depb", "1.0", "2022-02-01T10:00:00Z")
"""depa 2.0 needs depb, whose every release is dated after the era's date."""
needs_312 = pytest.mark.skipif(
    "3.12" not in available_interpreters(),
    reason="needs a Python 3.12 (its environments carry no era tools the index lacks)",
)


def test_a_backtrack_names_the_dependency_whose_dates_block_it() -> None:
    with serve([OLD, NEW, LATE]) as index:
        backtracks, exempt = find_backtracks(
            PackageIndex(index.url), {"depa": "1.0"}, ["depa"], python="3.7.16", date=DATE
        )
    assert backtracks == [Backtrack(name="depa", resolved="1.0", newest="2.0", blockers=["depb"])]
    assert exempt == [
        Exemption(
            name="depb",
            until="2022-02-02",  # the day after its first fitting release
            reason="all releases after the date",
            needed_by="depa 2.0",
        )
    ]


def test_an_old_release_that_does_not_fit_still_blocks() -> None:
    new = Wheel("depa", "2.0", "2019-08-01T10:00:00Z", requires=("depb>=1.0",))
    ancient = Wheel("depb", "0.5", "2018-01-01T10:00:00Z")
    with serve([OLD, new, ancient, LATE]) as index:
        _, exempt = find_backtracks(
            PackageIndex(index.url), {"depa": "1.0"}, ["depa"], python="3.7.16", date=DATE
        )
    assert [(e.name, e.reason) for e in exempt] == [
        ("depb", "no release of depb>=1.0 before the date")
    ]


def test_what_an_exempt_release_needs_in_turn_is_exempt_too() -> None:
    late = Wheel("depb", "1.0", LATE.uploaded, requires=("depc>=1",))
    later = Wheel("depc", "1.0", "2023-05-01T10:00:00Z")
    with serve([OLD, NEW, late, later]) as index:
        backtracks, exempt = find_backtracks(
            PackageIndex(index.url), {"depa": "1.0"}, ["depa"], python="3.7.16", date=DATE
        )
    assert backtracks[0].blockers == ["depb", "depc"]
    assert [(e.name, e.until, e.needed_by) for e in exempt] == [
        ("depb", "2022-02-02", "depa 2.0"),
        ("depc", "2023-05-02", "depb 1.0"),
    ]


def test_an_exemption_that_does_not_help_is_said() -> None:
    with serve([OLD, NEW, LATE]) as index:
        era = check_era(
            PackageIndex(index.url), ["depa==1.0"], lambda exempt: ["depa==1.0"],
            direct=["depa"], python="3.7.16", date=DATE,
        )  # fmt: skip
    assert [e.name for e in era.exempt] == ["depb"]
    assert era.note == (
        "depb exempt (all releases after the date); "
        "older than the date allows: depa 1.0 (not 2.0, held by depb)"
    )


@pytest.mark.parametrize(
    ("wheels", "direct", "found"),
    [
        ([OLD, NEW, LATE], ["depa<2"], []),  # the project asked for the older release
        ([OLD, Wheel("depa", "2.0", "2019-11-01T10:00:00Z", ("depb",)), LATE], ["depa"], []),
        ([OLD, Wheel("depa", "2.0", NEW.uploaded, yanked=True)], ["depa"], []),
        ([OLD, Wheel("depa", "2.0a1", NEW.uploaded, ("depb",)), LATE], ["depa"], []),
    ],
    ids=["pinned", "newer-after-the-date", "yanked", "pre-release"],
)
def test_what_is_no_backtrack(wheels: list[Wheel], direct: list[str], found: list[str]) -> None:
    with serve(wheels) as index:
        backtracks, exempt = find_backtracks(
            PackageIndex(index.url), {"depa": "1.0"}, direct, python="3.7.16", date=DATE
        )
    assert [b.name for b in backtracks] == found
    assert exempt == []


def test_a_requirement_whose_marker_does_not_apply_blocks_nothing() -> None:
    new = Wheel("depa", "2.0", NEW.uploaded, requires=('depb; python_version < "3"',))
    with serve([OLD, new, LATE]) as index:
        backtracks, exempt = find_backtracks(
            PackageIndex(index.url), {"depa": "1.0"}, ["depa"], python="3.7.16", date=DATE
        )
    assert exempt == []
    assert unrepaired_note(backtracks) == "older than the date allows: depa 1.0 (not 2.0)"


def test_the_versions_that_matter() -> None:
    frozen = installed(
        ["pytest-cov==2.8.1", "Six==1.16.0", "coverage==5.0", "pytest==5.2.1", "-e git+x#egg=y"]
    )
    assert list(that_matter(frozen, ["six>=1", "bad requirement ["])) == [
        "pytest",
        "pytest-cov",
        "six",
    ]


def test_without_a_way_to_rebuild_the_backtrack_is_only_reported() -> None:
    with serve([OLD, NEW, LATE]) as index:
        era = check_era(
            PackageIndex(index.url), ["depa==1.0"], None, direct=["depa"], python="3.7.16",
            date=DATE,
        )  # fmt: skip
    assert era.exempt == []
    assert era.versions == {PYTHON: "3.7.16", "depa": "1.0"}
    assert era.note == "older than the date allows: depa 1.0 (not 2.0, held by depb)"


def test_an_unreadable_index_is_one_line_and_checks_nothing() -> None:
    with serve([]) as index:
        url = index.url
    era = check_era(
        PackageIndex(url), ["depa==1.0"], None, direct=["depa"], python="3.7.16", date=DATE
    )
    assert era.error is not None
    assert era.error.startswith("cannot read the package index at http://127.0.0.1:")
    assert era.note == ""
    with pytest.raises(EnvironmentFailure):
        PackageIndex(url).releases("depa")


# -- with real uv --------------------------------------------------------------------------


def _tree(root: Path) -> Path:
    tree = root / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nversion = "1.0"\ndependencies = ["depa"]\n'
    )
    return tree


@pytest.mark.slow
@needs_312
def test_uv_repairs_a_backtracked_dependency(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    home = tmp_path / "home"
    request = EnvironmentRequest(
        project=ProjectSettings(source="demo", python="3.12", test_dependencies=()),
        tree=tree,
        date="2019-09-10T12:00:00Z",
        home=home,
    )
    with serve([OLD, NEW, LATE]) as index:
        env = UvBuilder(UvOptions(index_url=index.url)).build(request)
    python = env.python_version
    assert env.description == (
        f"uv: Python {python}, deps as of 2019-10-01; depb exempt (all releases after the "
        "date), depa 2.0 instead of 1.0"
    )
    versions, exempt = resolved(env)
    assert versions == {PYTHON: python, "depa": "2.0"}
    assert [(e.name, e.until, e.needed_by) for e in exempt] == [("depb", "2022-02-02", "depa 2.0")]
    imported = subprocess.run(
        [str(env.python), "-c", "import depa, depb; print(depa.VERSION, depb.VERSION)"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": ""},
    )
    assert imported.stdout.split() == ["2.0", "1.0"], imported.stderr
    recorded = json.loads((env.path / MARKER).read_text())
    assert recorded["description"] == env.description
    assert recorded["era"]["exempt"][0]["name"] == "depb"
    # A cache hit carries the same record.
    again = UvBuilder(UvOptions(index_url=index.url)).build(request)
    assert (again.description, again.versions) == (env.description, env.versions)


@pytest.mark.slow
@needs_312
def test_uv_without_a_backtrack_says_nothing_more(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    request = EnvironmentRequest(
        project=ProjectSettings(source="demo", python="3.12", test_dependencies=()),
        tree=tree,
        date="2019-06-10T12:00:00Z",  # before depa 2.0
        home=tmp_path / "home",
    )
    with serve([OLD, NEW, LATE]) as index:
        env = UvBuilder(UvOptions(index_url=index.url)).build(request)
    assert env.description == f"uv: Python {env.python_version}, deps as of 2019-07-01"
    assert resolved(env) == ({PYTHON: env.python_version, "depa": "1.0"}, [])


# -- ground truth on a synthetic repository -------------------------------------------------

RUNNER = ("pytest", "pluggy", "iniconfig", "packaging", "pygments")
"""The real pytest and what it needs, repackaged from this interpreter and dated 2019."""


@pytest.mark.slow
@needs_312
def test_ground_truth_records_the_repaired_era(tmp_path: Path) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    project = '[project]\nname = "demo"\nversion = "1.0"\ndependencies = ["depa"]\n'
    parent = repo.commit(
        "Initial",
        {"pyproject.toml": project, "pkg/__init__.py": "", "pkg/core.py": "LEVEL = 1\n"},
    )
    test = "import depa\nfrom pkg.core import LEVEL\n\n\ndef test_level():\n"
    test += "    assert LEVEL == int(float(depa.VERSION))\n"
    sha = repo.commit(
        "Follow depa 2 (#1)", {"pkg/core.py": "LEVEL = 2\n", "tests/test_core.py": test}
    )
    task = Task(
        id=sha[:12], sha=sha, parent=parent, date="2019-09-10T12:00:00+00:00", title="Fix",
        issue=TaskIssue(number=1), source_files=["pkg/core.py"],
        test_files=["tests/test_core.py"], changed_test_files=["tests/test_core.py"],
    )  # fmt: skip
    settings = BoutSettings(
        project=ProjectSettings(source="pkg", tests="tests", python="3.12"), root=repo.path
    )
    runner = [Wheel.installed(name, "2019-05-01T10:00:00Z") for name in RUNNER]
    with serve([*runner, OLD, NEW, LATE]) as index, Git(repo.path) as git:
        oracle = compute_oracle(
            task, git=git, builder=UvBuilder(UvOptions(index_url=index.url)),
            runner=pytest_runner(),
            project=settings.project, tasks=settings.tasks, home=tmp_path / "home", key="k",
            confine=lambda argv, tree, writable: argv,
        )  # fmt: skip
    assert oracle.status == "ok", oracle.reason
    assert oracle.fail_to_pass == ["tests/test_core.py::test_level"]  # depa 1.0 would fail it
    python = oracle.versions[PYTHON]
    assert oracle.versions == {
        PYTHON: python,
        "pytest": importlib.metadata.version("pytest"),
        "depa": "2.0",
    }
    assert [(e.name, e.reason) for e in oracle.exempt] == [("depb", "all releases after the date")]
    assert oracle.environment == (
        f"uv: Python {python}, deps as of 2019-10-01; pytest and what it needs as of "
        "2023-11-01 (the fix's predates Python 3.12); depb exempt (all releases after the "
        "date), depa 2.0 instead of 1.0"
    )
