"""The ``interpreter`` environment on bugbout's own Python: the project's test runs go
without the pytest plugins that only bugbout's requirements bring (Hydra's), unless the
project's declared dependencies need their distribution."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bugbout.core.contract.errors import EnvironmentFailure
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import EnvironmentRequest
from bugbout.plugins.environments.interpreter import (
    InterpreterBuilder,
    InterpreterOptions,
    Probe,
)

HYDRA = "hydra_pytest"
"""The pytest plugin hydra-core registers, one of bugbout's requirements."""


def project(root: Path, dependencies: list[str], hydra_loaded: bool) -> Path:
    """A project whose one test passes when Hydra's pytest plugin is loaded as expected."""
    tree = root / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "pyproject.toml").write_text(
        f'[project]\nname = "demo"\nversion = "1.0"\ndependencies = {json.dumps(dependencies)}\n'
    )
    (tree / "tests" / "test_plugins.py").write_text(
        "import sys\n\n"
        "def test_plugins(request):\n"
        f"    assert request.config.pluginmanager.has_plugin({HYDRA!r}) is {hydra_loaded}\n"
        f"    assert ('hydra' in sys.modules) is {hydra_loaded}\n"
    )
    return tree


def run_in(tree: Path, builder: InterpreterBuilder) -> subprocess.CompletedProcess[str]:
    request = EnvironmentRequest(
        project=ProjectSettings(source="tests"), tree=tree, home=tree.parent / "home"
    )
    command = builder.build(request).command(["-p", "no:cacheprovider", "-q"], tree, [])
    return subprocess.run(
        command.argv, cwd=command.cwd, env={**os.environ, **command.env},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.fixture(autouse=True)
def _hydra_is_here() -> None:
    from importlib import metadata

    if HYDRA not in {entry.name for entry in metadata.entry_points(group="pytest11")}:
        pytest.fail("hydra-core's pytest plugin is not installed: install bugbout first")
    try:
        metadata.distribution("hydra-joblib-launcher")
    except metadata.PackageNotFoundError:
        pytest.fail("hydra-joblib-launcher is not installed: pip install -e '.[dev]'")


@pytest.mark.parametrize(
    ("dependencies", "hydra_loaded"),
    [
        (["attrs"], False),
        (["bugbout"], False),  # bugbout is the tool racing the project, not its dependency
        (["hydra-core>=1.3"], True),
        (["hydra-joblib-launcher"], True),  # needs hydra-core: the project needs it too
    ],
)
def test_a_project_runs_without_the_plugins_only_bugbout_brings(
    tmp_path: Path, dependencies: list[str], hydra_loaded: bool
) -> None:
    tree = project(tmp_path, dependencies, hydra_loaded=hydra_loaded)
    result = run_in(tree, InterpreterBuilder(InterpreterOptions(path=sys.executable)))
    assert result.returncode == 0, result.stdout + result.stderr


def test_only_what_bugbout_alone_needs_is_left_out() -> None:
    probe = Probe(
        version="3.12.0",
        requires={
            "bugbout": ["hydra-core", "pydantic"],
            "hydra-core": ["omegaconf"],
            "omegaconf": [],
            "nemo": ["hydra-core"],
            "pytest-xdist": ["execnet"],
        },
        plugins=(("hydra_pytest", "hydra-core"), ("xdist", "pytest-xdist")),
    )
    assert probe.bugbouts_own({"attrs"}) == ("hydra_pytest",)
    assert probe.bugbouts_own({"nemo"}) == ()
    assert probe.bugbouts_own({"bugbout", "numpy"}) == ("hydra_pytest",)
    without = Probe("3.12.0", {"hydra-core": []}, (("hydra_pytest", "hydra-core"),))
    assert without.bugbouts_own(set()) == ()  # no bugbout here: the project's own choice


def test_an_interpreter_whose_output_is_unreadable_is_a_one_line_error(tmp_path: Path) -> None:
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\necho 'Welcome to this Python'\n")
    python.chmod(0o755)
    with pytest.raises(EnvironmentFailure, match="printed what bugbout cannot read") as error:
        InterpreterBuilder(InterpreterOptions(path=str(python))).build(
            EnvironmentRequest(project=ProjectSettings(source="src"), tree=tmp_path, home=tmp_path)
        )
    assert "\n" not in str(error.value)
