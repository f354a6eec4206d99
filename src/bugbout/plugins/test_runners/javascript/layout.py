"""Where a JavaScript project's tests are, and where an agent's go."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

_UNSAFE = re.compile(r"[^A-Za-z0-9]+")


def suite_paths(tree: Path, tests: str, test_files: Iterable[str]) -> tuple[str, ...]:
    """``tests`` when ``tree`` has it, then the folder of each of ``test_files`` outside it
    that the tree has (the project's root when a test file lies there)."""
    found: list[str] = [tests] if tests and (tree / tests).exists() else []
    for file in test_files:
        folder = str(PurePosixPath(file).parent)
        inside = any(folder == path or folder.startswith(f"{path}/") for path in found)
        if not inside and (tree / folder).is_dir():
            found.append(folder)
    return tuple(found)


def writing_folder(suite: Sequence[str], tests: str) -> str:
    """``tests`` when the suite has it, else the suite's first folder."""
    return tests if tests in suite or not suite else suite[0]


def split_name(name: str) -> tuple[str, str]:
    """A test file's name as its stem and the suffix the runner matches
    (``core.test.ts`` → ``core``, ``.test.ts``; ``core.ts`` → ``core``, ``.ts``)."""
    parts = name.split(".")
    if len(parts) >= 3 and parts[-2] in ("test", "spec"):
        return ".".join(parts[:-2]), f".{parts[-2]}.{parts[-1]}"
    if len(parts) >= 2:
        return ".".join(parts[:-1]), f".{parts[-1]}"
    return name, ""


def install_as(original: str, author: str, number: int) -> str:
    """``original``'s folder, named after ``author`` with the runner's suffix kept
    (``test/sum.test.ts`` by ``codex`` → ``test/bb_codex__sum.test.ts``)."""
    location = PurePosixPath(original)
    stem, suffix = split_name(location.name)
    name = _UNSAFE.sub("_", stem).strip("_") or "tests"
    again = f"_{number}" if number > 1 else ""
    return str(location.with_name(f"bb_{author}__{name}{again}{suffix}"))
