"""A build tool the requirements need at run time is held to its era's release, while
builds stay free of the date: attrs' 2022 tests load pytest-mypy-plugins, which imports
pkg_resources, and zope.interface needs setuptools at run time; today's setuptools has no
pkg_resources. Real uv, a local index dated like PyPI."""

from __future__ import annotations

from pathlib import Path

from bugbout.core.plumbing.environments.era_resolution import EraResolution
from bugbout.core.plumbing.environments.interpreters import (
    available_interpreters,
    interpreter_version,
)
from local_index import Wheel, serve

WHEELS = [
    Wheel("setuptools", "69.0", "2024-01-02T10:00:00Z"),
    Wheel("setuptools", "99.0", "2026-06-01T10:00:00Z"),
    Wheel("zopeish", "1.0", "2023-05-01T10:00:00Z", requires=("setuptools",)),
    Wheel("newer-tools", "1.0", "2023-05-01T10:00:00Z", requires=("setuptools>=90",)),
    Wheel("cython", "9.0", "2026-06-01T10:00:00Z"),
    Wheel("compiled", "1.0", "2023-05-01T10:00:00Z", requires=("cython",)),
]
"""zopeish needs setuptools at run time; newer-tools needs one newer than its era's;
compiled needs cython, which had no release in its era."""


def _pinned(tmp_path: Path, required: list[str]) -> list[str]:
    interpreter = available_interpreters()["3.12"]
    version = interpreter_version(interpreter)
    with serve(WHEELS) as index:
        era = EraResolution(
            tmp_path, "era", interpreter, version, "2024-03-01", required, [], index.url, 120
        )
        resolution, _ = era.resolved()
    return resolution.pinned


def test_a_build_tool_needed_at_run_time_gets_its_eras_release(tmp_path: Path) -> None:
    assert _pinned(tmp_path, ["zopeish"]) == ["setuptools==69.0", "zopeish==1.0"]


def test_a_build_tool_required_newer_than_its_era_keeps_the_newer(tmp_path: Path) -> None:
    assert _pinned(tmp_path, ["newer-tools"]) == ["newer-tools==1.0", "setuptools==99.0"]


def test_a_build_tool_with_no_release_in_its_era_keeps_the_newest(tmp_path: Path) -> None:
    assert _pinned(tmp_path, ["compiled"]) == ["compiled==1.0", "cython==9.0"]
