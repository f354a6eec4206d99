"""A declared test dependency left out because a dependency of it had no release before
the era's date (marshmallow's ``pytest==3.8.2``, which needs atomicwrites, all of whose
releases were uploaded again in 2022) is tried again once the era check exempts that
dependency. Real uv, a local index dated like PyPI."""

from __future__ import annotations

from pathlib import Path

from bugbout.core.plumbing.environments.era_resolution import EraResolution
from bugbout.core.plumbing.environments.interpreters import (
    available_interpreters,
    interpreter_version,
)
from local_index import Wheel, serve

WHEELS = [
    Wheel("depa", "1.0", "2019-03-01T10:00:00Z"),
    Wheel("depa", "2.0", "2019-08-01T10:00:00Z", requires=("depb>=1.0",)),
    Wheel("depb", "1.0", "2022-02-01T10:00:00Z"),
    Wheel("depc", "1.0", "2019-05-01T10:00:00Z", requires=("depb>=1.0",)),
]
"""depa 2.0 and depc 1.0 need depb, whose every release is dated after the era."""


def test_a_test_dependency_blocked_by_an_exempt_dependency_is_kept(tmp_path: Path) -> None:
    interpreter = available_interpreters()["3.12"]  # it carries no era setuptools
    version = interpreter_version(interpreter)
    with serve(WHEELS) as index:
        era = EraResolution(
            tmp_path, "era", interpreter, version, "2019-10-01", ["depa"], ["depc==1.0"],
            index.url, 120,
        )  # fmt: skip
        resolution, _ = era.resolved()
    assert resolution.left_out == {}
    assert resolution.pinned == ["depa==2.0", "depb==1.0", "depc==1.0"]
    assert [e.name for e in resolution.exempt] == ["depb"]
