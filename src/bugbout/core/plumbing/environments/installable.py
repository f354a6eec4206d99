"""A distribution whose era offered no file uv installs: its first release that does.

uv refuses a source distribution whose file name PEP 625 does not allow
(``Twisted-18.9.0.tar.bz2``), and some projects offered nothing else for years (Twisted
until 2019 on Linux). An era that needs one then does not resolve at all. Instead, the
distribution is resolved as of its first release after the era's date that has a file uv
installs on the era's Python (a fitting wheel, or a ``.tar.gz`` or ``.zip`` source): an
:class:`~bugbout.core.store.records.Exemption` from the date that says why.

Likewise a distribution whose era's sources no longer build here, even with the era's
build tools (unittest2's sources before 0.7.1 are Python 2 code): it is resolved as of its
first release with a wheel for the era's Python.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from packaging.tags import Tag, compatible_tags, cpython_tags, platform_tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import Version

from bugbout.core.plumbing.environments.package_index import File, PackageIndex
from bugbout.core.store.records import Exemption

_REFUSED = re.compile(  # uv may wrap its message anywhere, or be cut after "source"
    r"(?:versions\s+of\s+|\b)(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*?)(?:==\S+)?\s+(?:has|have)\s+a\s+"
    r"non-PEP\s+625-compliant\s+source"
)
SOURCES = (".tar.gz", ".zip")
"""The source archives uv builds."""


def refused(reason: str) -> str | None:
    """The distribution a failed resolution refused for its files' names, if that is why."""
    found = _REFUSED.search(reason)
    return found["name"] if found else None


def first_installable(
    index: PackageIndex,
    name: str,
    python: str,
    date: str,
    *,
    wheels: bool = False,
) -> tuple[Version, Exemption] | None:
    """``name``'s first release after ``date`` (ISO 8601 day) with a file uv installs on
    Python ``python`` (``wheels``: a wheel, its sources no longer building), and the
    exemption that lets it resolve; ``None`` when none has."""
    cutoff = datetime.fromisoformat(date).replace(tzinfo=UTC)
    tags = _tags(python)
    for version, files in sorted(index.releases(name).items()):
        if version.is_prerelease:
            continue
        dates = [f.uploaded for f in files if f.uploaded and _installable(f, python, tags, wheels)]
        if dates and min(dates) >= cutoff:
            until = (min(dates) + timedelta(days=1)).date().isoformat()
            what = "a wheel for" if wheels else "a file uv installs on"
            return version, Exemption(
                name=name,
                until=until,
                reason=f"no release before {version} has {what} Python {python}",
                needed_by="the requirements",
            )
    return None


def _installable(file: File, python: str, tags: set[Tag], wheels: bool) -> bool:
    if file.yanked or not file.admits(python):
        return False
    if file.filename.endswith(SOURCES):
        return not wheels
    try:
        _, _, _, file_tags = parse_wheel_filename(file.filename)
    except InvalidWheelFilename:
        return False
    return bool(file_tags & tags)


def _tags(python: str) -> set[Tag]:
    """The wheel tags CPython ``python`` installs on this machine."""
    version = tuple(int(part) for part in python.split(".")[:2])
    platforms = list(platform_tags())
    return {
        *cpython_tags(version, platforms=platforms),
        *compatible_tags(version, platforms=platforms),
    }
