"""Real old pytests for tests: each in its own environment with a Python of its era.

Their wheels are fetched from PyPI once (``pip download``) into a cache outside
``BUGBOUT_HOME`` (``~/.cache/bugbout-tests/pytest-eras``, or ``$BUGBOUT_TESTS_CACHE``),
and installed from there with uv, without an index. Offline with an empty cache, the
test fails saying what to fetch.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from python_mirror import pyenv_python

ERAS = {
    "2.7.3": ("pytest==2.7.3", "py==1.4.34"),
    "2.9.2": ("pytest==2.9.2", "py==1.4.34"),
    "3.0.7": ("pytest==3.0.7", "py==1.4.34", "setuptools==39.0.1"),
    "3.4.2": (
        "pytest==3.4.2", "py==1.5.4", "six==1.11.0", "attrs==17.4.0", "pluggy==0.6.0",
        "setuptools==39.0.1",
    ),
    "3.8.2": (
        "pytest==3.8.2", "py==1.5.4", "six==1.11.0", "attrs==17.4.0", "pluggy==0.7.1",
        "more-itertools==4.3.0", "atomicwrites==1.1.5", "setuptools==39.0.1",
    ),
    "4.6.11": (
        "pytest==4.6.11", "py==1.8.1", "six==1.15.0", "packaging==20.4", "pyparsing==2.4.7",
        "attrs==19.3.0", "atomicwrites==1.4.0", "pluggy==0.13.1", "importlib-metadata==1.6.1",
        "zipp==3.1.0", "wcwidth==0.2.4", "more-itertools==8.4.0", "setuptools==39.0.1",
    ),
    "5.4.3": (
        "pytest==5.4.3", "py==1.8.1", "six==1.15.0", "packaging==20.4", "pyparsing==2.4.7",
        "attrs==19.3.0", "pluggy==0.13.1", "importlib-metadata==1.6.1", "zipp==3.1.0",
        "wcwidth==0.2.4", "more-itertools==8.4.0", "setuptools==39.0.1",
    ),
}  # fmt: skip
"""Each old pytest with the versions of its dependencies of its time: 2.7 has no pluggy
and no ``pytest.hookimpl``, 2.9 no ``-o``, 3.0 vendors pluggy 0.4, 3.4 takes pluggy 0.6
and no ``--rootdir``, 3.8 takes pluggy 0.7 (no ``get_hookimpls``), 4.6 and 5.4 the
last of their lines."""
PYTHON = "3.6"


def cache() -> Path:
    return Path(os.environ.get("BUGBOUT_TESTS_CACHE", Path.home() / ".cache/bugbout-tests"))


def old_pytest(version: str) -> Path:
    """The Python of an environment holding pytest ``version`` (built once, cached)."""
    prefix = pyenv_python(PYTHON)
    if prefix is None:
        pytest.fail(f"no Python {PYTHON} on this machine: `pyenv install {PYTHON}`")
    root = cache() / "pytest-eras"
    root.mkdir(parents=True, exist_ok=True)
    venv = root / f"pytest-{version}"
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (venv / "ready").exists():
            _build(venv, prefix / "bin" / f"python{PYTHON}", ERAS[version], root / "wheels")
    return venv / "bin" / "python"


def _build(venv: Path, python: Path, pins: tuple[str, ...], wheels: Path) -> None:
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run(["uv", "venv", "--quiet", "--python", str(python), str(venv)], check=True)
    install = [
        "uv", "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"),
        "--no-index", "--find-links", str(wheels), *pins,
    ]  # fmt: skip
    if subprocess.run(install, capture_output=True, check=False).returncode != 0:
        _fetch(pins, wheels)
        subprocess.run(install, check=True)
    (venv / "ready").touch()


def _fetch(pins: tuple[str, ...], wheels: Path) -> None:
    """The wheels of ``pins`` from PyPI, into ``wheels``."""
    download = [
        "pip", "download", "--quiet", "--only-binary=:all:", "--no-deps",
        "--python-version", PYTHON, "--dest", str(wheels), *pins,
    ]  # fmt: skip
    fetched = subprocess.run(download, capture_output=True, text=True, check=False)
    if fetched.returncode != 0:
        pytest.fail(
            f"cannot fetch {' '.join(pins)} from PyPI into {wheels} (offline?): run "
            f"`{' '.join(download)}` on a machine with network ({fetched.stderr.strip()[-300:]})"
        )
