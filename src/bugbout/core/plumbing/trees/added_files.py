"""The files a patch's diff adds, read from the diff itself, without ``git apply``.

Reading an author's new test modules needs no tree: a text file the diff adds is its
``+`` lines. Each file's bytes are trusted only when their git blob id is the one the
diff's ``index`` line names (``diff_trees`` writes it from the file it read), so a diff
this reader does not follow exactly gives ``None``, and the caller applies it with
``git apply`` as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bugbout.core.plumbing.trees.patch import (
    NULL_OID,
    PatchError,
    blob_id,
    check_name,
    quote_path,
)
from bugbout.core.store.race_records import ChangeKind, FileChange

_INDEX = re.compile(rf"index {NULL_OID}\.\.([0-9a-f]{{40}})\n")
_HUNK = re.compile(r"@@ -0,0 \+1(?:,(\d+))? @@\n")
_NO_NEWLINE = "\\ No newline at end of file\n"
_MODES = ("100644", "100755")
"""A regular file's modes (a symlink or a submodule is left to ``git apply``)."""


def added_files(diff: str, changes: Sequence[FileChange]) -> dict[str, bytes] | None:
    """The content of each file of ``changes`` (every file ``diff`` changes), when each is
    a text file the diff adds, at a path inside the tree; else ``None``."""
    if (
        not changes
        or not diff.endswith("\n")
        or any(
            change.kind != ChangeKind.ADDED or change.binary or change.symlink for change in changes
        )
    ):
        return None
    sections = diff.split("\ndiff --git ")
    if len(sections) != len(changes):
        return None
    paths = {_header(change.path): change.path for change in changes}
    found: dict[str, bytes] = {}
    for number, section in enumerate(sections):
        lines = _lines(section if number == 0 else "diff --git " + section)
        if number < len(sections) - 1:
            lines[-1] += "\n"
        path = paths.get(lines[0])
        if path is None or path in found:
            return None
        content = _added(lines, path)
        if content is None:
            return None
        found[path] = content
    return found


def _header(path: str) -> str:
    return f"diff --git {quote_path(f'a/{path}')} {quote_path(f'b/{path}')}\n"


def _lines(text: str) -> list[str]:
    """``text``'s lines, each with its ``\\n`` (split at ``\\n`` only, as ``git apply`` does)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def _added(lines: list[str], path: str) -> bytes | None:
    """The content one ``diff --git`` section (its lines) adds at ``path``, checked
    against its blob id."""
    try:
        check_name(path)
    except PatchError:
        return None
    if len(lines) < 3 or lines[1][:-1] not in _new_modes():
        return None
    index = _INDEX.fullmatch(lines[2])
    if index is None:
        return None
    body = lines[3:]
    if body:
        tab = "\t" if " " in path else ""
        expected = ["--- /dev/null" + tab + "\n", f"+++ {quote_path(f'b/{path}')}{tab}\n"]
        hunk = _HUNK.fullmatch(body[2]) if len(body) > 2 else None
        if body[:2] != expected or hunk is None:
            return None
        body = body[3:]
        if len(body) - (body[-1:] == [_NO_NEWLINE]) != int(hunk[1] or 1):
            return None
    try:
        content = _joined(body).encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return None
    return content if blob_id(content) == index[1] else None


def _new_modes() -> tuple[str, ...]:
    return tuple(f"new file mode {mode}" for mode in _MODES)


def _joined(body: list[str]) -> str:
    """The text of a hunk's ``+`` lines (the last loses its newline when marked so)."""
    cut = body[-1:] == [_NO_NEWLINE]
    added = body[:-1] if cut else body
    if not all(line.startswith("+") for line in added):
        raise ValueError("a line of the hunk is not an added one")
    text = "".join(line[1:] for line in added)
    return text[:-1] if cut else text
