"""Tests a project runs compiled: its test script runs the runner on a folder its build
writes (uuid: ``"pretest": "npm run build"``, ``"test": "node --test dist/esm/test"``),
the TypeScript test files compiled there. A run of such a test file runs its compiled
twin, once the build made it, and names its tests by the file the project wrote."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

from bugbout.plugins.test_runners.javascript import script
from bugbout.plugins.test_runners.javascript.reports import RunReport
from bugbout.test_runners import SEPARATOR

GLOB = re.compile(r"[*?{\[]")
RUNNABLE = (".js", ".mjs", ".cjs")
"""What a runner runs without compiling it."""


def script_folders(tree: Path) -> tuple[str, ...]:
    """The folders of ``tree`` the paths of its test script lie in (the part of a path
    before any glob: ``dist-node/test/*.js`` → ``dist-node/test``)."""
    words = [word for step in script.words(tree) for word in step]
    found: list[str] = []
    for word in words:
        if word.startswith("-") or "/" not in word or "=" in word or "node_modules" in word:
            continue
        fixed = GLOB.split(word, maxsplit=1)[0].rstrip("/")
        folder = fixed if (tree / fixed).is_dir() else str(PurePosixPath(fixed).parent)
        if folder not in (".", "", *found) and (tree / folder).is_dir():
            found.append(folder)
    return tuple(found)


def twins(tree: Path, targets: Sequence[str]) -> dict[str, str]:
    """Each test file of ``targets`` outside the test script's folders, by its compiled
    twin in them: the runnable file whose path, its suffix aside, ends as the test
    file's does for the most folders (``src/test/v1.test.ts`` →
    ``dist/esm/test/v1.test.js``)."""
    folders = script_folders(tree)
    paths = list(dict.fromkeys(path for folder in folders for path in _runnable(tree, folder)))
    found: dict[str, str] = {}
    for target in targets:
        if not (tree / target).is_file() or any(_under(target, folder) for folder in folders):
            continue
        stem = PurePosixPath(target).with_suffix("").parts
        shared = {path: _shared(PurePosixPath(path).with_suffix("").parts, stem) for path in paths}
        best = max(shared, key=lambda path: shared[path], default="")
        if best and shared[best] and best not in found:
            found[best] = target
    return found


def as_written(report: RunReport, compiled: dict[str, str]) -> None:
    """``report``'s tests and files named by the test files the project wrote, not their
    compiled twins (``compiled``: each source by its twin)."""

    def named(test: str) -> str:
        file, separator, title = test.partition(SEPARATOR)
        return f"{compiled.get(file, file)}{separator}{title}"

    report.outcomes = {named(test): outcome for test, outcome in report.outcomes.items()}
    report.failures = {named(test): text for test, text in report.failures.items()}
    report.file_errors = {named(path): text for path, text in report.file_errors.items()}


def _runnable(tree: Path, folder: str) -> Iterable[str]:
    for root, folders, files in os.walk(tree / folder):
        folders[:] = sorted(name for name in folders if name != "node_modules")
        for name in sorted(files):
            if name.endswith(RUNNABLE):
                yield Path(root, name).relative_to(tree).as_posix()


def _under(path: str, folder: str) -> bool:
    return PurePosixPath(folder) in PurePosixPath(path).parents


def _shared(parts: tuple[str, ...], other: tuple[str, ...]) -> int:
    """How many of the last parts of two paths are the same."""
    count = 0
    for mine, theirs in zip(reversed(parts), reversed(other), strict=False):
        if mine != theirs:
            break
        count += 1
    return count
