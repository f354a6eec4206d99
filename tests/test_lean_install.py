"""The user's install: ``pip install bugbout`` pulls what a bout needs, never the sweep
launchers' heavy dependencies or the developer tools (those are extras), and what it
installs in a fresh virtual environment runs."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
HEAVY = {"ray", "hydra-ray-launcher", "submitit", "hydra-submitit-launcher", "joblib"}
DEVELOPER = {"pytest", "nox", "ruff", "mypy", "build", "hatchling", "import-linter"}


def built_wheel(folder: Path) -> Path:
    """bugbout's wheel, built from this checkout."""
    # `build` and hatchling are developer dependencies: no index, no pip needed
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(folder),
         str(ROOT)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = folder.glob("bugbout-*.whl")
    return wheel


@pytest.mark.slow
def test_the_user_install_runs_without_launchers_or_developer_tools(tmp_path: Path) -> None:
    wheel = built_wheel(tmp_path / "dist")
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
    # a fresh environment from uv's cache (the suite's own install filled it): no index
    uv = shutil.which("uv")
    assert uv is not None, "uv is not installed: pip install uv"
    venv = tmp_path / "venv"
    python = str(venv / "bin" / "python")
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    installed = subprocess.run(
        [uv, "pip", "install", "--offline", "--quiet", "--python", python, str(wheel)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-2000:]
    names = subprocess.run(
        [uv, "pip", "list", "--python", python, "--format", "freeze"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    present = {line.split("==")[0].lower() for line in names.splitlines() if "==" in line}
    assert "bugbout" in present and not present & (HEAVY | DEVELOPER), present
    helped = subprocess.run(
        [str(venv / "bin" / "bugbout"), "--help"], capture_output=True, text=True, check=False
    )
    assert helped.returncode == 0 and "commands:" in helped.stdout, helped.stderr
