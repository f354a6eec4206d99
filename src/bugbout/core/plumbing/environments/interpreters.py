"""Which interpreter on this machine tests a project of a given era, and the tree under
test on ``PYTHONPATH``."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from bugbout.core.contract.errors import EnvironmentFailure
from bugbout.core.plumbing.project.project_metadata import release_numbers

PYTHON_RELEASES: dict[str, str] = {
    "3.6": "2016-12-23",
    "3.7": "2018-06-27",
    "3.8": "2019-10-14",
    "3.9": "2020-10-05",
    "3.10": "2021-10-04",
    "3.11": "2022-10-24",
    "3.12": "2023-10-02",
    "3.13": "2024-10-07",
    "3.14": "2025-10-07",
}
"""The date each Python 3 minor version was first released."""

PYTHON_END_OF_LIFE: dict[str, str] = {
    "2.7": "2020-01-01",
    "3.2": "2016-02-20",
    "3.3": "2017-09-29",
    "3.4": "2019-03-18",
    "3.5": "2020-09-13",
    "3.6": "2021-12-23",
    "3.7": "2023-06-27",
    "3.8": "2024-10-07",
    "3.9": "2025-10-31",
    "3.10": "2026-10-31",
    "3.11": "2027-10-31",
    "3.12": "2028-10-31",
    "3.13": "2029-10-31",
    "3.14": "2030-10-31",
}
"""The day each Python 3 minor version stopped getting fixes (future ones: their month)."""

MIN_PYTHON = (3, 6)
STAND_IN_BEFORE = (3, 8)
"""The oldest Python uv downloads: an era older than this that the machine lacks is
tested on the oldest Python here instead, and says so (see :func:`stand_in`)."""
_PYENV_VERSION = re.compile(r"^(3)\.(\d+)\.(\d+)$")
_PATH_PYTHON = re.compile(r"^python(3)\.(\d+)$")


# -- interpreters ---------------------------------------------------------------------------


def available_interpreters() -> dict[str, Path]:
    """Python 3.6+ interpreters on this machine, by minor version (``"3.9"``).

    Looks in pyenv's versions (the newest patch release of each minor version wins), then
    ``python3.X`` on ``PATH`` (skipping pyenv's shims), then the running interpreter.
    """
    found: dict[str, Path] = {}
    for version, path in (*_pyenv_interpreters(), *_path_interpreters(), _running()):
        found.setdefault(version, path)
    return dict(sorted(found.items(), key=lambda item: _version_tuple(item[0])))


def pyenv_root() -> Path | None:
    """pyenv's root directory, if pyenv is installed."""
    root = os.environ.get("PYENV_ROOT")
    if root and Path(root).is_dir():
        return Path(root)
    default = Path.home() / ".pyenv"
    if default.is_dir():
        return default
    pyenv = shutil.which("pyenv")
    if not pyenv:
        return None
    try:
        result = subprocess.run(
            [pyenv, "root"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    path = Path(result.stdout.strip())
    return path if result.returncode == 0 and path.is_dir() else None


def _pyenv_interpreters() -> Iterator[tuple[str, Path]]:
    root = pyenv_root()
    versions = root / "versions" if root else None
    if versions is None or not versions.is_dir():
        return
    found: dict[str, tuple[tuple[int, ...], Path]] = {}
    for entry in versions.iterdir():
        match = _PYENV_VERSION.match(entry.name)
        if not match:
            continue
        numbers = tuple(int(n) for n in match.groups())
        minor = f"{numbers[0]}.{numbers[1]}"
        binary = entry / "bin" / f"python{minor}"
        if numbers[:2] < MIN_PYTHON or not _executable(binary):
            continue
        if minor not in found or found[minor][0] < numbers:
            found[minor] = (numbers, binary)
    for minor, (_, binary) in found.items():
        yield minor, binary


def _path_interpreters() -> Iterator[tuple[str, Path]]:
    for directory in os.environ.get("PATH", os.defpath).split(os.pathsep):
        if not directory or "shims" in Path(directory).parts:
            continue
        try:  # names: /usr/bin and /bin made into paths and sorted took 15 ms, their names 1
            names = sorted(os.listdir(directory))  # noqa: PTH208
        except OSError:
            continue
        for name in names:
            match = _PATH_PYTHON.match(name)
            if not match:
                continue
            numbers = (int(match.group(1)), int(match.group(2)))
            real = Path(directory, name).resolve()
            if numbers < MIN_PYTHON or "shims" in real.parts or not _executable(real):
                continue
            yield f"{numbers[0]}.{numbers[1]}", real


def _running() -> tuple[str, Path]:
    major, minor = sys.version_info[:2]
    return f"{major}.{minor}", Path(sys.executable)


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(release_numbers(version))


def choose_python(
    declared: str | None,
    fix_date: str | None,
    available: Mapping[str, Path],
    pinned: str | None,
) -> tuple[str, Path]:
    """The Python version (``"3.9"``) and interpreter to test a fix with.

    ``pinned`` wins. Otherwise, among the available versions the ``declared`` specifier
    allows, the newest released before ``fix_date``, else the oldest of them.
    """
    versions = sorted(available, key=_version_tuple)
    listing = ", ".join(versions) or "none"
    if pinned:
        minor = pinned_minor(pinned)
        if minor in available:
            return minor, Path(available[minor])
        raise EnvironmentFailure(
            f"project.python is {pinned} but Python {minor} is not installed (available: "
            f"{listing}); install it, e.g. `pyenv install {minor}`"
        )
    candidates = [v for v in versions if _allows(declared, v)]
    if not candidates:
        raise EnvironmentFailure(
            f"the project declares Python {declared!r} at this fix but no installed Python "
            f"satisfies it (available: {listing}); install one, e.g. `pyenv install "
            f"<version>`, or set project.python"
        )
    if not fix_date:
        return candidates[-1], Path(available[candidates[-1]])
    chosen = (_released(candidates, fix_date) or candidates[:1])[-1]
    return chosen, Path(available[chosen])


def era_python(
    declared: str | None,
    fix_date: str | None,
    local: Iterable[str],
    pinned: str | None,
    classified: Iterable[str] = (),
) -> str:
    """The Python version (``"3.8"``) of a fix's era, whether this machine has it or not.

    ``pinned`` wins. Otherwise, among the versions the ``declared`` specifier allows, and
    of those no newer than the newest its ``classified`` versions name (when that one
    was still maintained at ``fix_date``: see :func:`classified_newest`): the newest
    ``local`` one that was maintained at ``fix_date`` (released before it, not yet at its
    end of life); else the newest released before it; else the oldest. Without a date:
    the newest local one, else the newest.
    """
    if pinned:
        return pinned_minor(pinned)
    here = set(local)
    candidates = [v for v in eras(here) if _allows(declared, v)]
    if not candidates:
        raise EnvironmentFailure(
            f"the project declares Python {declared!r} at this fix but no Python from "
            f"{'.'.join(map(str, MIN_PYTHON))} on satisfies it; set project.python"
        )
    newest = classified_newest(classified, fix_date)
    if newest is not None:
        below = [v for v in candidates if _version_tuple(v) <= _version_tuple(newest)]
        candidates = below or candidates[:1]
    if not fix_date:
        return ([v for v in candidates if v in here] or candidates)[-1]
    day = fix_date.strip()[:10]
    released = _released(candidates, fix_date)
    maintained = [v for v in released if v in here and PYTHON_END_OF_LIFE.get(v, "9999") > day]
    return (maintained or released or candidates[:1])[-1]


def classified_newest(classified: Iterable[str], fix_date: str | None) -> str | None:
    """The newest Python the trove classifiers name (``"3.4"``; ``"2.7"`` when they name
    Python 2 alone), when it binds: it was still maintained at ``fix_date`` (classifiers
    a project forgot to update since do not); ``None`` when they name no minor version
    of Python 3."""
    names = set(classified)
    threes = sorted((v for v in names if v.startswith("3.")), key=_version_tuple)
    if threes:
        newest = threes[-1]
    elif names and all(v.startswith("2") for v in names):
        newest = "2.7"
    else:
        return None
    day = (fix_date or "").strip()[:10]
    return newest if not day or PYTHON_END_OF_LIFE.get(newest, "9999") > day else None


def classified_lacks(classified: Iterable[str], fix_date: str | None, version: str) -> str:
    """What the tests lack on Python ``version`` when it is newer than the newest the
    classifiers name (one line; empty when it is not)."""
    newest = classified_newest(classified, fix_date)
    if newest is None or _version_tuple(version) <= _version_tuple(newest):
        return ""
    if newest.startswith("2"):
        return (
            f"the project declared Python 2 alone at this fix (its classifiers), tested on "
            f"{version}: bugbout runs tests on Python 3.6 and later"
        )
    return (
        f"the project declared Python up to {newest} at this fix (its classifiers), tested "
        f"on {version}: bugbout runs tests on Python 3.6 and later"
    )


def eras(local: Iterable[str]) -> list[str]:
    """The Python versions (``"3.8"``) from 3.6 on that bugbout knows or ``local`` holds."""
    known = {*PYTHON_RELEASES, *local}
    return sorted((v for v in known if _version_tuple(v) >= MIN_PYTHON), key=_version_tuple)


def stand_in(declared: str | None, era: str, local: Iterable[str]) -> tuple[str, str] | None:
    """For an ``era`` older than :data:`STAND_IN_BEFORE` that is not in ``local``: the
    oldest version here the ``declared`` specifier allows from then on, and what its
    tests lack (one line, for the reasons they give); ``None`` for any other era."""
    if _version_tuple(era) >= STAND_IN_BEFORE:
        return None
    after = [v for v in eras(local) if _version_tuple(v) > _version_tuple(era)]
    here = sorted((v for v in local if _version_tuple(v) > _version_tuple(era)), key=_version_tuple)
    allowed = [v for v in here if _allows(declared, v)]
    if not allowed or not after:
        return None
    lacks = (
        f"needs Python <= {era} (the fix predates Python {after[0]}, released "
        f"{PYTHON_RELEASES[after[0]]}), tested on {allowed[0]}; install one, e.g. "
        f"`pyenv install {era}`"
    )
    return allowed[0], lacks


def pinned_minor(pinned: str) -> str:
    """The minor version (``"3.9"``) of a ``project.python`` such as ``3.9.18``."""
    return ".".join(pinned.strip().split(".")[:2])


def _released(versions: list[str], fix_date: str) -> list[str]:
    """Those of ``versions`` first released before ``fix_date``."""
    day = fix_date.strip()[:10]
    return [v for v in versions if PYTHON_RELEASES.get(v, "9999") < day]


def _allows(declared: str | None, minor: str) -> bool:
    """Whether ``declared`` admits some release of ``minor`` (unparsable admits all)."""
    if not declared or not declared.strip():
        return True
    try:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet
    except ImportError:  # pragma: no cover - packaging is a dependency of pytest and uv
        return True
    try:
        specifier = SpecifierSet(declared.strip().replace(" ", "").rstrip(","))
    except InvalidSpecifier:
        return True
    return any(specifier.contains(v, prereleases=True) for v in (minor, f"{minor}.999"))


# -- the tree on PYTHONPATH -----------------------------------------------------------------


def python_path(
    tree: Path,
    import_roots: Iterable[str],
    extra_paths: Iterable[Path],
    metadata: Path | None = None,
) -> str:
    """``PYTHONPATH`` for running a tree's tests: ``extra_paths``, the import roots (those
    of every location the package had: a tree holds one of them), the tree, and last the
    folder of the project's ``metadata`` (:mod:`~bugbout.core.plumbing.project.dist_info`).

    Entries are absolute (the tests run with the tree as working directory) and unique.
    """
    roots = [tree / root for root in import_roots]
    last = [metadata] if metadata is not None else []
    entries = [str(Path(p).absolute()) for p in (*extra_paths, *roots, tree, *last)]
    return os.pathsep.join(dict.fromkeys(entries))


@functools.lru_cache(maxsize=64)
def interpreter_version(interpreter: Path) -> str:
    """The full version of an interpreter, e.g. ``3.9.18`` (asked once per process)."""
    code = "import sys; sys.stdout.write('%d.%d.%d' % tuple(sys.version_info[:3]))"
    try:
        result = subprocess.run(
            [str(interpreter), "-c", code], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise EnvironmentFailure(f"Python interpreter {interpreter} cannot run: {exc}") from None
    if result.returncode != 0 or not re.fullmatch(r"\d+\.\d+\.\d+", result.stdout.strip()):
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise EnvironmentFailure(f"Python interpreter {interpreter} does not start: {last}")
    return result.stdout.strip()
