"""What a JavaScript or TypeScript project's test files are, by their names as the
runners collect them (Vitest and Jest's ``*.test.*``, ``*.spec.*`` and ``__tests__/``,
Mocha's and ``node --test``'s ``test/`` folders), and where its source is, by the
package's layout (``src/``, ``lib/``, each workspace's of a monorepo)."""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

import yaml

SOURCE_SUFFIXES = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")
"""How a JavaScript or TypeScript module's name ends."""
DECLARATIONS = (".d.ts", ".d.mts", ".d.cts")
"""Type declarations: no code that runs, no tests."""
MARKS = ("test", "spec")
"""What a test file's name says before its suffix: ``sum.test.ts``, ``sum.spec.js``."""
TEST_FOLDERS = frozenset({"__tests__", "test", "tests"})
SUPPORT_FOLDERS = frozenset({"fixtures", "fixture", "__fixtures__", "__mocks__"})
"""Folders inside a test folder that hold what tests read or import, not tests."""
SOURCE_FOLDERS = ("src", "lib")
"""Where a package keeps its source, in the order looked for."""
LEFT_OUT = frozenset({"node_modules", "dist", "build", "coverage"})
"""Folders of installed or generated files, never a project's own tests or source."""
NOT_SOURCE = frozenset(
    {"bench", "benchmark", "benchmarks", "demo", "doc", "docs", "example", "examples",
     "script", "scripts", "site", "types", "typings", "website"}
)  # fmt: skip
"""Folders at a package's root whose modules are not the package's code."""


def is_module(path: str) -> bool:
    """Whether ``path`` is a JavaScript or TypeScript module (not type declarations),
    outside installed or generated folders."""
    parts = PurePosixPath(path).parts
    return (
        path.endswith(SOURCE_SUFFIXES)
        and not path.endswith(DECLARATIONS)
        and not LEFT_OUT.intersection(parts[:-1])
    )


def is_type_test(path: str) -> bool:
    """Whether ``path`` holds type tests (``*.test-d.ts``, Vitest's and tsd's): the
    compiler checks them, a test run runs none."""
    stem = PurePosixPath(PurePosixPath(path).stem)
    return path.endswith(SOURCE_SUFFIXES) and stem.suffix in (".test-d", ".spec-d")


def is_test_file(path: str) -> bool:
    """Whether ``path`` (relative to the repository, ``/``-separated) is a test file:
    a module named ``*.test.*``, ``*.spec.*`` or ``test.*`` (``node --test``'s and
    AVA's single file), or any module under a ``__tests__``, ``test`` or ``tests``
    folder but not under its fixtures or mocks."""
    if not is_module(path):
        return False
    location = PurePosixPath(path)
    stem = PurePosixPath(location.stem)
    if stem.suffix.removeprefix(".") in MARKS or stem.name == "test":
        return True
    folders = location.parts[:-1]
    return bool(TEST_FOLDERS.intersection(folders)) and not SUPPORT_FOLDERS.intersection(folders)


def workspaces(read: Callable[[str], bytes | None]) -> tuple[str, ...]:
    """The workspace patterns of a monorepo (``packages/*``): package.json's
    ``workspaces`` (a list, or Yarn's ``{packages: [...]}``) and pnpm-workspace.yaml's
    ``packages``; ``read`` gives a file's text by its path (``None``: no such file)."""
    found: list[str] = []
    manifest = _parsed(read("package.json"), json.loads)
    declared = manifest.get("workspaces") if isinstance(manifest, dict) else None
    if isinstance(declared, dict):
        declared = declared.get("packages")
    if isinstance(declared, list):
        found.extend(str(pattern) for pattern in declared)
    pnpm = _parsed(read("pnpm-workspace.yaml"), yaml.safe_load)
    packages = pnpm.get("packages") if isinstance(pnpm, dict) else None
    if isinstance(packages, list):
        found.extend(str(pattern) for pattern in packages)
    return tuple(dict.fromkeys(p.removeprefix("./").rstrip("/") for p in found))


def _parsed(text: bytes | None, parse: Callable[[bytes], object]) -> object:
    """``text`` parsed, or ``None`` when it is absent or does not parse."""
    if text is None:
        return None
    try:
        return parse(text)
    except (ValueError, yaml.YAMLError):
        return None


def source_roots(paths: Iterable[str], read: Callable[[str], bytes | None]) -> tuple[str, ...]:
    """The package's source (``project.source``) in a repository holding ``paths`` (its
    files, relative to its root), ``read`` giving a file's text: in each package (each
    workspace of a monorepo, else the root), its ``src`` or else its ``lib`` folder
    when that holds modules, else each module at the package's root that is not a test
    or a tool's configuration, by its name without its suffix (mining takes a package
    that is one module by that name), and each folder there that holds modules and is
    not one of tests, documentation, examples, scripts or benchmarks."""
    files = [path for path in paths if is_module(path) and not is_test_file(path)]
    patterns = [p for p in workspaces(read) if not p.startswith("!")]
    excluded = [p[1:] for p in workspaces(read) if p.startswith("!")]
    packages = sorted(
        {
            str(PurePosixPath(path).parent)
            for path in paths
            if PurePosixPath(path).name == "package.json"
            and _matches(str(PurePosixPath(path).parent), patterns)
            and not _matches(str(PurePosixPath(path).parent), excluded)
        }
    )
    roots: list[str] = []
    for package in packages or ["."]:
        roots.extend(_package_source(package, files))
    return tuple(roots)


def _matches(folder: str, patterns: list[str]) -> bool:
    """Whether ``folder`` is one of the workspace ``patterns`` (``packages/*``,
    ``packages/**``)."""
    return any(
        fnmatch.fnmatchcase(folder, pattern) or fnmatch.fnmatchcase(folder, f"{pattern}/*")
        for pattern in patterns
        if pattern
    )


def _package_source(package: str, files: list[str]) -> list[str]:
    """The source of the package in folder ``package``, given the repository's modules
    that are not tests."""
    prefix = "" if package == "." else f"{package}/"
    for folder in SOURCE_FOLDERS:
        if any(path.startswith(f"{prefix}{folder}/") for path in files):
            return [f"{prefix}{folder}"]
    root = PurePosixPath(package)
    found: set[str] = set()
    for path in files:
        location = PurePosixPath(path)
        if location.parent == root and not _is_configuration(location.name):
            found.add(str(location.with_suffix("")))
        elif root in location.parents and location.parent != root:
            folder = location.relative_to(root).parts[0]
            if folder not in NOT_SOURCE | TEST_FOLDERS and not folder.startswith("."):
                found.add(str(root / folder))
    return sorted(found)


def _is_configuration(name: str) -> bool:
    """A tool's configuration at a package's root (``vitest.config.ts``,
    ``.eslintrc.js``, ``jest.setup.js``, ``rollup.config.mjs``)."""
    stem = name.split(".")
    return name.startswith(".") or any(part in ("config", "setup", "conf") for part in stem[1:])
