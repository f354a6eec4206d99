"""What a patch's JavaScript source adds that reaches into the test run rather than
fixing anything: ending or signalling the process, hooking its exit, importing a test
runner, reading bugbout's channel or another process's memory."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from bugbout.test_runners import FileChange

SUFFIXES = frozenset({".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"})
READ_LIMIT = 2_000_000
SIGNS = (
    (re.compile(r"\bprocess\s*\.\s*(exit|reallyExit|abort|kill)\b"), "ends or signals a process"),
    (re.compile(r"\bprocess\s*\.\s*(on|once|prependListener)\s*\(\s*['\"]exit"), "hooks the exit"),
    (re.compile(r"\bprocess\s*\.\s*exitCode\b"), "sets the process's exit code"),
    (re.compile(r"['\"](vitest|node:test|@jest/[\w-]+|jest|mocha)['\"]"), "imports a test runner"),
    (re.compile(r"\bBUGBOUT_"), "reads bugbout's variables"),
    (re.compile(r"/proc/|/dev/fd/"), "reads process internals"),
)


def scan(text: str) -> list[tuple[int, str]]:
    """Each line of ``text`` with a sign, and what it does."""
    return [
        (number, what)
        for number, line in enumerate(text.splitlines(), start=1)
        for pattern, what in SIGNS
        if pattern.search(line)
    ]


def suspicious(tree: Path, base: Path | None, changes: Sequence[FileChange]) -> list[str]:
    """The signs ``changes`` add to the source files of ``tree`` that ``base`` lacked."""
    found: list[str] = []
    for change in changes:
        if change.area != "source" or change.kind == "deleted" or change.symlink:
            continue
        if PurePosixPath(change.path).suffix not in SUFFIXES:
            continue
        text = _read(tree / change.path)
        if text is None:
            found.append(f"{change.path}:1: not inspected: not a regular file under 2 MB")
            continue
        before = _read(base / change.path) if base is not None else None
        old = Counter(what for _, what in scan(before or ""))
        for number, what in scan(text):
            if old[what]:
                old[what] -= 1
            else:
                found.append(f"{change.path}:{number}: {what}")
    return found


def _read(path: Path) -> str | None:
    if not path.is_file() or path.is_symlink() or path.stat().st_size > READ_LIMIT:
        return None
    return path.read_text(errors="replace")
