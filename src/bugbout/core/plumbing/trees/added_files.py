"""The files a patch's diff adds, read from the diff itself, without ``git apply``.

Reading an author's new test modules needs no tree: a text file the diff adds is its
``+`` lines. A file's bytes are kept only when the diff's section for it is, to the
byte, the section ``diff_trees`` writes for those bytes (its blob id included); any
other diff, or files a tree could not hold together, give ``None``, and the caller
applies the diff with ``git apply`` as before.
"""

from __future__ import annotations

from collections.abc import Sequence

from bugbout.core.plumbing.trees.patch import PatchError, check_name, file_section, quote_path
from bugbout.core.store.race_records import ChangeKind, FileChange

_NO_NEWLINE = "\\ No newline at end of file\n"
_MODES = ("100644", "100755")
"""A regular file's modes (a symlink or a submodule is left to ``git apply``)."""
_HEAD = 6
"""A non-empty added file's section opens with six lines: ``diff --git``, its mode, its
``index``, ``---``, ``+++`` and its one hunk's ``@@``."""


def added_files(diff: str, changes: Sequence[FileChange]) -> dict[str, bytes] | None:
    """The content of each file of ``changes`` (every file ``diff`` changes), when each is
    a text file the diff adds, at a path inside the tree, none in another's place; else
    ``None``."""
    if (
        not changes
        or not diff.endswith("\n")
        or any(
            change.kind != ChangeKind.ADDED or change.binary or change.symlink for change in changes
        )
    ):
        return None
    sections = diff.split("\ndiff --git ")
    parts = [change.path.split("/") for change in changes]
    folders = {"/".join(path[:depth]) for path in parts for depth in range(1, len(path))}
    if len(sections) != len(changes) or any(change.path in folders for change in changes):
        return None
    paths = {_header(change.path): change.path for change in changes}
    found: dict[str, bytes] = {}
    for number, section in enumerate(sections):
        text = section if number == 0 else "diff --git " + section
        text += "\n" if number < len(sections) - 1 else ""
        path = paths.get(text.partition("\n")[0] + "\n")
        if path is None or path in found:
            return None
        content = _added(text, path)
        if content is None:
            return None
        found[path] = content
    return found


def _header(path: str) -> str:
    return f"diff --git {quote_path(f'a/{path}')} {quote_path(f'b/{path}')}\n"


def _added(text: str, path: str) -> bytes | None:
    """The content one ``diff --git`` section adds at ``path``, when the section is what
    ``diff_trees`` writes for it."""
    try:
        check_name(path)
    except PatchError:
        return None
    lines = [line + "\n" for line in text.split("\n")][:-1]  # text ends with a newline
    mode = lines[1].removeprefix("new file mode ").rstrip("\n") if len(lines) > 1 else ""
    if mode not in _MODES:
        return None
    try:
        content = _joined(lines[_HEAD:]).encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return None
    written, binary = file_section(path, None, mode, None, content)
    return content if not binary and written == text else None


def _joined(body: list[str]) -> str:
    """The text of a hunk's ``+`` lines (the last loses its newline when marked so)."""
    cut = body[-1:] == [_NO_NEWLINE]
    added = body[:-1] if cut else body
    if not all(line.startswith("+") for line in added):
        raise ValueError("a line of the hunk is not an added one")
    text = "".join(line[1:] for line in added)
    return text[:-1] if cut else text
