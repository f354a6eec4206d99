"""A distribution whose era offered only source archives uv refuses (PEP 625: Twisted's
``.tar.bz2`` until 2019) is resolved as of its first release uv installs, and the
environment line says so. Real uv, a local index."""

from __future__ import annotations

from pathlib import Path

from bugbout.core.plumbing.environments.era_resolution import EraResolution
from bugbout.core.plumbing.environments.interpreters import (
    available_interpreters,
    interpreter_version,
)
from bugbout.core.plumbing.environments.uv_resolution import Resolution
from local_index import Wheel, serve

WHEELS = [
    Wheel("oldlib", "1.0", "2018-06-01T12:00:00Z", archive=".tar.bz2"),
    Wheel("oldlib", "1.1", "2018-10-01T12:00:00Z", archive=".tar.bz2"),
    Wheel("oldlib", "2.0", "2019-08-01T12:00:00Z"),
    Wheel("oldlib", "2.1", "2020-02-01T12:00:00Z"),
]


def _resolved(tmp_path: Path, wheels: list[Wheel], date: str, name: str) -> tuple[Resolution, str]:
    """``name`` resolved as of ``date`` from an index of ``wheels``, on Python 3.12 (it
    carries no era setuptools), and that Python's version."""
    interpreter = available_interpreters()["3.12"]
    version = interpreter_version(interpreter)
    with serve(wheels) as index:
        resolution, _ = EraResolution(
            tmp_path, "era", interpreter, version, date, [name], [], index.url, 120
        ).resolved()
    return resolution, version


def test_a_distribution_of_refused_archives_resolves_as_of_its_first_installable_release(
    tmp_path: Path,
) -> None:
    resolution, version = _resolved(tmp_path, WHEELS, "2019-01-01", "oldlib")
    assert resolution.pinned == ["oldlib==2.0"]
    reason = f"no release before 2.0 has a file uv installs on Python {version}"
    assert [(e.name, e.until, e.reason) for e in resolution.exempt] == [
        ("oldlib", "2019-08-02", reason)
    ]
    assert resolution.note == f"oldlib as of 2019-08-02 ({reason})"


SOURCES_ONLY = [
    Wheel("py2lib", "1.0", "2014-02-01T12:00:00Z", archive=".tar.gz"),
    Wheel("py2lib", "1.1", "2014-09-01T12:00:00Z", archive=".tar.gz"),
    Wheel("py2lib", "2.0", "2015-06-01T12:00:00Z"),
    Wheel("py2lib", "2.1", "2016-02-01T12:00:00Z"),
]


def test_a_distribution_whose_era_sources_do_not_build_resolves_as_of_its_first_wheel(
    tmp_path: Path,
) -> None:
    """Its era offered sources that no build here turns into a wheel (here archives no
    build can read; unittest2's sources before 0.7.1 are Python 2 code): resolved as of
    its first release with a wheel, and said, not an error."""
    resolution, version = _resolved(tmp_path, SOURCES_ONLY, "2015-01-01", "py2lib")
    assert resolution.pinned == ["py2lib==2.0"]
    reason = f"no release before 2.0 has a wheel for Python {version}"
    assert [(e.name, e.until, e.reason) for e in resolution.exempt] == [
        ("py2lib", "2015-06-02", reason)
    ]
