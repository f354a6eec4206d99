"""A project whose test requirements hold pytest older than the oldest bugbout's test runs
take (structlog's 2013 ``dev-requirements.txt``: ``pytest==2.3.5``, and ``py==1.4.15``,
which no newer pytest takes): the era is resolved again with that oldest pytest as a floor,
a pin of pytest is set aside with why, what needs an older pytest is left out as not
resolving, and the rest of the declared test dependencies stays. A resolution kept before
is made again. Real uv, a local index dated like PyPI."""

from __future__ import annotations

import json
from pathlib import Path

from bugbout.core.plumbing.environments.era_resolution import EraResolution
from bugbout.core.plumbing.environments.interpreters import (
    available_interpreters,
    interpreter_version,
)
from local_index import Wheel, serve

WHEELS = [
    Wheel("py", "1.4.15", "2013-04-20T10:00:00Z"),
    Wheel("py", "1.4.31", "2015-12-01T10:00:00Z"),
    Wheel("pytest", "2.3.5", "2013-04-30T10:00:00Z", requires=("py>=1.4.13",)),
    Wheel("pytest", "3.0.5", "2016-12-05T10:00:00Z", requires=("py>=1.4.29",)),
    Wheel("pytest", "7.4.0", "2023-06-23T10:00:00Z", requires=("py>=1.4.29",)),
    Wheel("mock", "1.0.1", "2012-11-05T10:00:00Z"),
]


def era(home: Path, declared: list[str], url: str) -> EraResolution:
    interpreter = available_interpreters()["3.12"]
    version = interpreter_version(interpreter)
    return EraResolution(
        home, "era", interpreter, version, "2013-07-01", ["pytest"], declared, url, 120
    )


def test_a_pin_of_a_pytest_too_old_is_set_aside(tmp_path: Path) -> None:
    with serve(WHEELS) as index:
        resolution, _ = era(tmp_path, ["pytest==2.3.5", "mock==1.0.1"], index.url).resolved()
    assert "pytest==7.4.0" in resolution.pinned
    assert "mock==1.0.1" in resolution.pinned
    assert list(resolution.left_out) == ["pytest==2.3.5"]
    assert resolution.left_out["pytest==2.3.5"] == (
        "set aside: it holds pytest at 2.3, older than 2.7, the oldest bugbout's test runs "
        "take (no hook wrappers); pytest 7.4 runs instead"
    )


def test_a_pin_that_holds_pytest_back_is_left_out(tmp_path: Path) -> None:
    with serve(WHEELS) as index:
        resolution, _ = era(tmp_path, ["py==1.4.15", "mock==1.0.1"], index.url).resolved()
    assert "pytest==7.4.0" in resolution.pinned
    assert "mock==1.0.1" in resolution.pinned
    assert list(resolution.left_out) == ["py==1.4.15"]
    assert resolution.left_out["py==1.4.15"].startswith("did not resolve")


def test_a_project_that_requires_an_old_pytest_keeps_it(tmp_path: Path) -> None:
    interpreter = available_interpreters()["3.12"]
    with serve(WHEELS) as index:
        resolution, _ = EraResolution(
            tmp_path, "era", interpreter, interpreter_version(interpreter), "2013-07-01",
            ["pytest==2.3.5"], [], index.url, 120,
        ).resolved()  # fmt: skip
    assert "pytest==2.3.5" in resolution.pinned  # the runs then say what to require


def test_a_pin_bugbout_runs_stays(tmp_path: Path) -> None:
    with serve(WHEELS) as index:
        resolution, _ = era(tmp_path, ["pytest==3.0.5"], index.url).resolved()
    assert "pytest==3.0.5" in resolution.pinned
    assert resolution.left_out == {}


def test_a_resolution_kept_with_the_old_pytest_is_made_again(tmp_path: Path) -> None:
    with serve(WHEELS) as index:
        first = era(tmp_path, ["pytest==2.3.5"], index.url)
        first.resolved()
        kept = tmp_path / "resolutions" / "era.json"
        stored = json.loads(kept.read_text())
        stored["resolution"]["pinned"] = ["pytest==2.3.5"]  # as the code before kept it
        stored["resolution"]["left_out"] = {}
        del stored["runner-floor"]
        kept.write_text(json.dumps(stored))
        resolution, _ = era(tmp_path, ["pytest==2.3.5"], index.url).resolved()
    assert "pytest==7.4.0" in resolution.pinned
    assert list(resolution.left_out) == ["pytest==2.3.5"]


def test_a_pin_of_pytest_that_admits_the_floor_keeps_its_bound(tmp_path: Path) -> None:
    with serve(WHEELS) as index:
        declared = ["py==1.4.15", "pytest>=2.3,<4"]
        resolution, _ = era(tmp_path, declared, index.url).resolved()
    assert "pytest==3.0.5" in resolution.pinned
    assert list(resolution.left_out) == ["py==1.4.15"]
