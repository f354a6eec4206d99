"""The benchmarks' raw floor held as bugbout's runs are: a held raw run is kept to the
confinement's ``limits.tests`` by the guard, as each of bugbout's test runs is."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import ProjectSettings, TestLimitsSettings
from bugbout.core.plumbing.confinement import confine as confinement
from bugbout.core.plumbing.environments.environment import EnvironmentRequest

PROJECT = ProjectSettings(source="src/pkg", tests="tests")


@pytest.fixture
def raw_pytest() -> Iterator[ModuleType]:
    folder = str(Path(__file__).parents[1] / "benchmarks")
    sys.path.insert(0, folder)
    try:
        import raw_pytest

        yield raw_pytest
    finally:
        sys.path.remove(folder)


def test_a_held_raw_run_is_kept_to_the_limits(raw_pytest: ModuleType, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "test_one.py").write_text("def test_one():\n    pass\n")
    plugins = make_plugins(entry_points=False)
    environment = plugins.create("environment", "interpreter").build(
        EnvironmentRequest(project=PROJECT, tree=tree, home=tmp_path / "bugbout-home")
    )
    confine = confinement.test_confinement(
        TestLimitsSettings(processes=1),  # the sandbox and pytest are two already
        plugins.create("sandbox", "none"),
        tmp_path / "bugbout-home",
        (),
    )
    runs = {}
    for held in (False, True):
        home = tmp_path / f"home-{held}"
        home.mkdir()
        runs[held] = raw_pytest.raw_run(
            environment, tree, ["tests"], project=PROJECT, home=home, confine=confine, held=held
        )

    raw_pytest.run_raw([runs[False]])  # the sandbox alone: the test runs
    with pytest.raises(SystemExit, match="ran no test"):
        raw_pytest.run_raw([runs[True]])  # held: the guard ends it past one process
