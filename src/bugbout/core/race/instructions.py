"""Instruction arms: what an attempt's checkout holds of the repository's own instruction
files (``keep`` them, ``remove`` them, or replace them with the team's file), and the
probe that shows whether the agent read its guidance: a random code seeded into the
files it is given, looked for in what the agent said (its transcript).

The arm's edits are bugbout's, not the agent's: the files are put back as the commit has
them before the attempt's patch is taken."""

from __future__ import annotations

import functools
import hashlib
import os
import secrets
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.transcript import Step
from bugbout.core.plumbing.trees.checkout import WorkingCopy

KEEP, REMOVE = "keep", "remove"
FILES = frozenset(
    {
        "AGENTS.md",
        "CLAUDE.md",
        "GEMINI.md",
        "AGENT.md",
        ".cursorrules",
        ".windsurfrules",
        ".clinerules",
        "copilot-instructions.md",
    }
)
"""File names the coding agents read as instructions, wherever they are in the tree."""
FOLDERS = (".cursor/rules", ".github/instructions")
"""Folders of instructions (every file in them): Cursor's rules, Copilot's."""
SKIPPED = frozenset({".git", "node_modules", ".venv", ".tox", "__pycache__"})


def probe_line(token: str) -> str:
    """The probe appended to an instruction file: only an agent that read it can say it."""
    return (
        f"\n\nGuidance check: if you have read this file, include the code {token} "
        "once in your final message.\n"
    )


@dataclass(frozen=True)
class Arm:
    """An attempt's instruction arm: each instruction file bugbout writes (its content)
    or removes (``None``) before the run, the probe's random code, and whether a file the
    agent is given carries it."""

    files: dict[str, bytes | None] = field(default_factory=dict)
    token: str = field(default_factory=lambda: f"bugbout-{secrets.token_hex(8)}")
    probed: bool = False

    @property
    def removes(self) -> bool:
        """Whether the arm removes a file (which an overlay's upper layer cannot do
        without privileges: the working copy must then be a plain copy)."""
        return any(content is None for content in self.files.values())

    def apply(self, tree: Path) -> None:
        """Write the arm into ``tree``: the working copy, or its overlay's upper layer."""
        for name, content in self.files.items():
            path = tree / name
            if content is None:
                _remove(path)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.unlink(missing_ok=True)
                path.write_bytes(content)

    def restore(self, copy: WorkingCopy, base: Path) -> None:
        """Put the instruction files of ``copy`` back as they are in ``base``, the commit:
        the arm leaves nothing in the attempt's patch. In an overlay, what its upper layer
        holds of them goes, and the commit's files show through again."""
        for name in self.files:
            path, original = copy.changes / name, base / name
            if copy.overlay is not None:
                _remove(path)
                continue
            _remove(path)
            if original.is_dir() and not original.is_symlink():
                shutil.copytree(original, path, symlinks=True)
            elif original.exists() or original.is_symlink():
                path.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(original, path, follow_symlinks=False)

    def read(self, steps: Iterable[Step] | None, summary: str) -> bool | None:
        """Whether the agent said the probe's code: in its transcript's steps, or without
        one in its closing ``summary`` (``None``: no probe)."""
        if not self.probed:
            return None
        said = [step.text for step in steps] if steps is not None else [summary]
        return any(self.token in text for text in said)


def arm_key(given: str) -> str:
    """The arm as part of an attempt's key: ``remove``, or the replacement by content."""
    if given in (KEEP, REMOVE):
        return given
    return f"replace {hashlib.sha256(_replacement(given)).hexdigest()}"


def plan_arm(given: str, base: Path, name: str) -> Arm:
    """The arm ``given`` (``keep``, ``remove`` or a replacement file) on a checkout of
    ``base``; a replacement is written as ``name``, the file the agent's CLI reads."""
    found, arm = instruction_files(base), Arm()
    probe = probe_line(arm.token).encode()
    if given == REMOVE:
        return Arm(dict.fromkeys(found), arm.token)
    if given == KEEP:
        probed: dict[str, bytes | None] = {
            path: (base / path).read_bytes() + probe
            for path in found
            if (base / path).is_file() and not (base / path).is_symlink()
        }
        return Arm(probed, arm.token, probed=bool(probed))
    replaced: dict[str, bytes | None] = dict.fromkeys(found)
    replaced[name] = _replacement(given) + probe
    return Arm(replaced, arm.token, probed=True)


def _remove(path: Path) -> None:
    """Remove a file, a link or a folder, if there is one."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


@functools.lru_cache(maxsize=64)
def instruction_files(tree: Path) -> tuple[str, ...]:
    """The instruction files and folders of ``tree``, a cached commit's tree (never
    changed: walked once per process), relative to it."""
    found: list[str] = []
    for folder in FOLDERS:
        if (tree / folder).is_dir():
            found.append(folder)
    for directory, subdirs, names in os.walk(tree):
        relative = Path(directory).relative_to(tree)
        subdirs[:] = [d for d in subdirs if d not in SKIPPED]
        found += [(relative / n).as_posix() for n in names if n in FILES]
    inside = [f for f in found if any(f != d and f.startswith(f"{d}/") for d in FOLDERS)]
    return tuple(sorted(set(found) - set(inside)))


def _replacement(given: str) -> bytes:
    """The team's instruction file that replaces the checkout's."""
    path = Path(given).expanduser()
    if not path.is_file():
        raise ConfigError(
            f"instructions {given!r} is not `keep`, `remove` or an instruction file; name one"
        )
    return path.read_bytes()
