"""A release that stands in for its era's (the era offered only source archives uv refuses:
Twisted 13.1) may need a newer dependency than the era had or pins (Twisted 19.7 needs
zope.interface 4.4.2, the era pins 4.0.5): that dependency is exempted from the date, and
a pin that conflicts is set aside for what the replacement needs, named with why; every
other pin stays. Real uv, a local index dated like PyPI."""

from __future__ import annotations

import json
from pathlib import Path

from bugbout.core.plumbing.environments.era_resolution import EraResolution
from bugbout.core.plumbing.environments.interpreters import (
    available_interpreters,
    interpreter_version,
)
from bugbout.core.plumbing.environments.uv_resolution import Resolution
from local_index import Wheel, serve

WHEELS = [
    Wheel("oldlib", "1.0", "2013-03-01T12:00:00Z", archive=".tar.bz2"),
    Wheel("oldlib", "2.0", "2019-08-01T12:00:00Z", requires=("dep>=2.0", "helper>=1", "other>=1")),
    Wheel("dep", "1.0", "2013-02-01T12:00:00Z"),
    Wheel("dep", "2.0", "2017-06-01T12:00:00Z"),
    Wheel("dep", "3.0", "2022-01-01T12:00:00Z"),
    Wheel("helper", "1.0", "2015-05-01T12:00:00Z"),
    Wheel("helper", "1.5", "2021-05-01T12:00:00Z"),
    Wheel("other", "1.0", "2013-02-01T12:00:00Z"),
    Wheel("other", "2.0", "2016-02-01T12:00:00Z"),
    Wheel("plug", "1.0", "2013-01-01T12:00:00Z"),
    Wheel("plug", "1.1", "2013-05-01T12:00:00Z", requires=("late>=1",)),
    Wheel("late", "1.0", "2014-01-01T12:00:00Z"),
]
DATE = "2013-07-01"


def _resolved(home: Path, declared: list[str], wheels: list[Wheel] = WHEELS) -> Resolution:
    interpreter = available_interpreters()["3.12"]
    version = interpreter_version(interpreter)
    with serve(wheels) as index:
        resolution, _ = EraResolution(
            home, "era", interpreter, version, DATE, ["other==1.0"], declared, index.url, 120
        ).resolved()
    return resolution


def test_the_replacement_and_what_it_needs_resolve_with_the_era_pins(tmp_path: Path) -> None:
    resolution = _resolved(tmp_path, ["oldlib", "dep==1.0"])
    # other==1.0 admits what oldlib 2.0 needs (other>=1): the era's pin stays
    assert resolution.pinned == ["dep==2.0", "helper==1.0", "oldlib==2.0", "other==1.0"]
    assert resolution.left_out == {
        "dep==1.0": "set aside: oldlib 2.0, standing in for oldlib's release of the era, "
        "needs dep>=2.0"
    }
    assert "dep>=2.0" in resolution.requirements
    assert "dep==1.0" not in resolution.requirements
    exempt = {e.name: (e.until, e.reason) for e in resolution.exempt}
    assert exempt["dep"] == (
        "2017-06-02",
        "needed by oldlib 2.0: no release of dep>=2.0 before the date",
    )
    assert exempt["helper"] == ("2015-05-02", "needed by oldlib 2.0: all releases after the date")
    assert "helper as of 2015-05-02 (needed by oldlib 2.0" in resolution.note


def test_a_pin_set_aside_stays_so_when_the_era_check_resolves_again(tmp_path: Path) -> None:
    """plug 1.1 needs late, all of whose releases came after the date: the era check
    exempts it and resolves again, and the pin set aside is not taken back then."""
    resolution = _resolved(tmp_path, ["oldlib", "dep==1.0", "plug"])
    assert resolution.era is not None and [e.name for e in resolution.era.exempt] == ["late"]
    assert "plug==1.1" in resolution.pinned
    assert "dep==2.0" in resolution.pinned
    assert list(resolution.left_out) == ["dep==1.0"]
    assert "dep==1.0" not in resolution.requirements


def test_a_pin_of_the_release_uv_cannot_install_is_set_aside(tmp_path: Path) -> None:
    resolution = _resolved(tmp_path, ["oldlib==1.0", "dep==1.0"])
    assert "oldlib==2.0" in resolution.pinned
    assert "dep==2.0" in resolution.pinned
    assert "other==1.0" in resolution.pinned  # not in conflict: the era's pin stays
    python = interpreter_version(available_interpreters()["3.12"])
    assert resolution.left_out["oldlib==1.0"] == (
        f"set aside: no release before 2.0 has a file uv installs on Python {python}; "
        "oldlib 2.0 stands in"
    )
    assert set(resolution.left_out) == {"oldlib==1.0", "dep==1.0"}


def test_a_resolution_kept_before_the_replacements_is_made_again(tmp_path: Path) -> None:
    _resolved(tmp_path, ["oldlib", "dep==1.0"])
    kept = tmp_path / "resolutions" / "era.json"
    stored = json.loads(kept.read_text())
    stored["resolution"]["pinned"] = ["dep==1.0", "other==1.0"]  # as the code before kept it
    stored["resolution"]["left_out"] = {"oldlib": "did not resolve: ..."}
    del stored["replacements"]
    kept.write_text(json.dumps(stored))
    resolution = _resolved(tmp_path, ["oldlib", "dep==1.0"])
    assert "oldlib==2.0" in resolution.pinned
