"""A package index read as uv reads it: PEP 691's JSON simple API, with PEP 700's upload
times, and each release's requirements from its core metadata (PEP 658, else the wheel).

Only what the era check needs: which versions of a project existed at a date, and what a
release requires.
"""

from __future__ import annotations

import io
import json
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from dataclasses import dataclass
from datetime import datetime
from email.parser import HeaderParser

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from bugbout.core.contract.errors import EnvironmentFailure

PYPI = "https://pypi.org/simple"
JSON_API = "application/vnd.pypi.simple.v1+json"
TIMEOUT = 30.0
MAX_WHEEL = 20_000_000
"""The largest wheel downloaded to read its metadata, when the index serves none apart."""


@dataclass(frozen=True)
class File:
    """One file of a release, as the index lists it."""

    filename: str
    url: str
    uploaded: datetime | None
    requires_python: str | None = None
    yanked: bool = False
    metadata: bool = False
    """Whether the index serves its core metadata apart (PEP 658/714)."""

    def admits(self, python: str) -> bool:
        """Whether an interpreter of version ``python`` may install this file."""
        if not self.requires_python:
            return True
        try:
            return SpecifierSet(self.requires_python).contains(python, prereleases=True)
        except InvalidSpecifier:
            return True


def files_of(payload: dict[str, object], base: str) -> dict[Version, list[File]]:
    """A PEP 691 project page's files by version (files whose name carries none, or an
    invalid one, are left out)."""
    releases: dict[Version, list[File]] = {}
    entries = payload.get("files")
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        filename = str(entry.get("filename", ""))
        version = _version(filename)
        if version is None:
            continue
        uploaded = entry.get("upload-time")
        releases.setdefault(version, []).append(
            File(
                filename=filename,
                url=urllib.parse.urljoin(base, str(entry.get("url", ""))),
                uploaded=_timestamp(uploaded) if isinstance(uploaded, str) else None,
                requires_python=entry.get("requires-python") or None,
                yanked=bool(entry.get("yanked")),
                metadata=bool(entry.get("core-metadata") or entry.get("dist-info-metadata")),
            )
        )
    return releases


class PackageIndex:
    """A simple-API index at ``url`` (default PyPI); pages are read once each."""

    def __init__(self, url: str | None = None) -> None:
        self.url = (url or PYPI).rstrip("/") + "/"
        self._pages: dict[str, dict[Version, list[File]]] = {}

    def releases(self, name: str) -> dict[Version, list[File]]:
        """Every version of project ``name`` with its files (empty: unknown to the index)."""
        project = canonicalize_name(name)
        if project not in self._pages:
            page = f"{self.url}{project}/"
            try:
                payload = json.loads(self._get(page, accept=JSON_API))
            except urllib.error.HTTPError as exc:
                if exc.code != 404:
                    raise self._failure(page, exc) from None
                payload = {}
            except (OSError, ValueError) as exc:
                raise self._failure(page, exc) from None
            self._pages[project] = files_of(payload, page)
        return self._pages[project]

    def requirements(self, file: File) -> list[str]:
        """What a release requires (``Requires-Dist``), read from ``file``'s metadata."""
        try:
            if file.metadata:
                text = self._get(f"{file.url.split('#', 1)[0]}.metadata").decode("utf-8")
            elif file.filename.endswith(".whl"):
                text = _wheel_metadata(self._get(file.url.split("#", 1)[0]))
            else:
                return []  # an sdist says what it requires only when built
        except (OSError, ValueError, zipfile.BadZipFile) as exc:
            raise self._failure(file.url, exc) from None
        return HeaderParser().parsestr(text).get_all("Requires-Dist") or []

    def _get(self, url: str, accept: str = "*/*") -> bytes:
        request = urllib.request.Request(url, headers={"Accept": accept})
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            body: bytes = response.read(MAX_WHEEL + 1)
        if len(body) > MAX_WHEEL:
            raise ValueError(f"more than {MAX_WHEEL} bytes")
        return body

    @staticmethod
    def _failure(url: str, exc: Exception) -> EnvironmentFailure:
        return EnvironmentFailure(f"cannot read the package index at {url}: {exc}")


def _wheel_metadata(wheel: bytes) -> str:
    with zipfile.ZipFile(io.BytesIO(wheel)) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return archive.read(name).decode("utf-8")


def _version(filename: str) -> Version | None:
    """The version in a wheel's or an sdist's file name."""
    if filename.endswith(".whl"):
        parts = filename.split("-")
        text = parts[1] if len(parts) >= 5 else ""
    else:
        stem = filename
        for suffix in (".tar.gz", ".zip", ".tar.bz2", ".tgz"):
            stem = stem.removesuffix(suffix)
        if stem == filename:
            return None
        text = stem.rpartition("-")[2]
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _timestamp(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
