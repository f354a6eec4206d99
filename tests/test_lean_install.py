"""The user's install: ``pip install bugbout`` pulls what a bout needs, never the sweep
launchers' heavy dependencies or the developer tools (those are extras)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
HEAVY = {"ray", "hydra-ray-launcher", "submitit", "hydra-submitit-launcher", "joblib"}
DEVELOPER = {"pytest", "nox", "ruff", "mypy", "build", "hatchling", "import-linter"}


@pytest.mark.slow
def test_the_user_install_leaves_launchers_and_developer_tools_to_extras(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--wheel-dir", str(tmp_path), str(ROOT)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("bugbout-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
        lines = archive.read(metadata).decode().splitlines()
    requirements = [
        Requirement(line.split(":", 1)[1]) for line in lines if line.startswith("Requires-Dist:")
    ]
    plain = {r.name.lower() for r in requirements if r.marker is None}
    assert plain and not plain & (HEAVY | DEVELOPER), plain
    extras = {r.name.lower() for r in requirements if r.marker is not None}
    assert {"ray", "hydra-ray-launcher", "pytest", "nox"} <= extras
