"""What ``bugbout init`` learns of a JavaScript or TypeScript project, asked of the
``javascript`` runner by name (its ``find_project``): the package's source as its layout
had it over the history, its tests' folder, the runner and lockfile its head uses, and how
many tests it defines."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from bugbout.plugins.test_runners.javascript import files, titles

Reader = Callable[[str], bytes | None]
"""The content of a file of one commit by its path, ``None`` when it has none."""
LOCKFILES = (
    ("package-lock.json", "npm"),
    ("npm-shrinkwrap.json", "npm"),
    ("pnpm-lock.yaml", "pnpm"),
    ("yarn.lock", "yarn"),
)
"""Each lockfile and the client that writes it, in the order the ``npm`` environment
looks for them."""


@dataclass(frozen=True)
class PackageProject:
    """A JavaScript or TypeScript project as ``init`` writes its settings."""

    source: tuple[str, ...]
    tests: str
    runner: str
    """The runner its head's ``package.json`` uses (``vitest``, ``jest``, ...)."""
    lockfile: str
    """The client its head's lockfile is for (``npm``, ``pnpm``, ``yarn``), or empty."""
    count: int
    """The tests its test files define, ``.each`` tables counted (a lower bound)."""
    suffixes: tuple[str, ...] = files.SOURCE_SUFFIXES
    """How its source files end."""


def find_project(
    root: Path, listing: Sequence[str], past: Iterable[tuple[Sequence[str], Reader]], runner: str
) -> PackageProject:
    """The project checked out at ``root`` (``listing``: its files), its source as the
    layout of each of ``past`` (earlier commits' files and readers) put it too."""
    tests = [path for path in listing if files.is_test_file(path)]
    found = list(files.source_roots(listing, lambda name: _read(root / name)))
    for paths, read in past:
        found.extend(files.source_roots(paths, read))
    return PackageProject(
        source=tuple(dict.fromkeys(found)),
        tests=folder_of_tests(tests),
        runner=runner,
        lockfile=next((client for name, client in LOCKFILES if (root / name).is_file()), ""),
        count=sum(cases or 1 for path in tests for cases in _defined(root / path).values()),
    )


def folder_of_tests(tests: Sequence[str]) -> str:
    """The folder named like a tests' folder (``test``, ``tests``, ``__tests__``) that
    holds most of the test files ``tests``; ``test`` when none does (tests beside the
    source)."""
    found: Counter[str] = Counter()
    for path in tests:
        parts = PurePosixPath(path).parts[:-1]
        for index, part in enumerate(parts):
            if part in files.TEST_FOLDERS:
                found["/".join(parts[: index + 1])] += 1
                break
    return found.most_common(1)[0][0] if found else "test"


def _defined(path: Path) -> dict[str, int | None]:
    try:
        return titles.defined_tests(str(path), path.read_bytes())
    except OSError:
        return {}


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None
