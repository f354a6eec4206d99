"""An attempt's patch: what changed on disk in its working copy against the base tree.

``diff_trees`` walks both trees (caches left out), finds every file added, modified or
deleted, and writes three diffs in ``git apply`` format, split by area: the package's
source, the tests, everything else. Text files get unified diffs; binary files (a NUL byte
in their first 8000 bytes, or not UTF-8) get git binary patches; symlinks are mode
``120000`` entries whose content is their target; the executable bit is a mode change.
Paths are relative to the tree's root, with git's ``a/`` and ``b/`` prefixes; a name
git would quote (a byte that is not UTF-8 included) is C-quoted as git writes it, so a
diff is always valid UTF-8 and applies back to the same bytes.

A file whose size and modification time (to the nanosecond) equal the base's is taken as
unchanged without being read: working copies preserve the base's mtimes, and any write
sets a new one. The trees are walked a directory at a time
(``bugbout.core.plumbing.trees.treewalk``) (from an overlay working copy's upper directory alone,
only what changed) and held to the ``limits:`` settings: past ``files`` added entries or
``patch-size`` bytes of diff, ``diff_trees`` stops with ``LimitExceeded`` before reading further.

``apply_patch`` applies one of those diffs to a tree with plain ``git apply``, after
checking that every path it touches stays inside the tree.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import os
import re
import subprocess
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import NoReturn

from bugbout.core.contract.errors import BugboutError
from bugbout.core.contract.settings import LimitsSettings
from bugbout.core.plumbing.confinement.limits import LimitExceeded, exceeded
from bugbout.core.plumbing.project.testmodules import is_test_module
from bugbout.core.plumbing.trees.testtree import TestTree
from bugbout.core.plumbing.trees.treewalk import SYMLINK, Entry, walk, walk_upper
from bugbout.core.store.race_records import ChangeArea, ChangeKind, FileChange, Patch

IGNORED_DIRECTORIES = frozenset(
    {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", ".tox",
     ".nox", ".git"}
)  # fmt: skip
"""Directories never part of a patch, wherever they are (``.git``: git cannot track it)."""
IGNORED_FILES = frozenset({".coverage", ".DS_Store"})
IGNORED_SUFFIXES = (".pyc", ".pyo", ".egg-info")
"""Files, or directories (``*.egg-info``), never part of a patch."""
IGNORED_PREFIXES = (".coverage.",)
"""Parallel coverage data files (``.coverage.<host>.<pid>.<random>``)."""

TEXT_PROBE = 8000
"""Like git, a file with a NUL byte in its first 8000 bytes is binary."""
CONTEXT = 3
NULL_OID = "0" * 40


class PatchError(BugboutError):
    """A patch could not be made, or does not apply."""


def is_ignored(name: str, *, directory: bool = False) -> bool:
    """Whether a file or directory called ``name`` is a cache left out of patches, or a
    ``.git`` in any case (git tracks none, and no patch may write into one)."""
    if directory and (name in IGNORED_DIRECTORIES or name.lower() == ".git"):
        return True
    return (
        name in IGNORED_FILES
        or name.endswith(IGNORED_SUFFIXES)
        or name.startswith(IGNORED_PREFIXES)
    )


def classify(
    path: str,
    *,
    source: str | tuple[str, ...],
    tests: str,
    is_test_file: Callable[[str], bool] = is_test_module,
) -> ChangeArea:
    """A path's area: ``test`` (under the tests, any ``conftest.py``, any test file of the
    test runner, ``is_test_file``: pytest's ``test_*.py`` or ``*_test.py`` unless told),
    else ``source`` (under the package's directory, or any of them), else ``other``."""
    tests_prefix = tests.strip("/") + "/"
    if (
        path.startswith(tests_prefix)
        or PurePosixPath(path).name == "conftest.py"
        or is_test_file(path)
    ):
        return ChangeArea.TEST
    directories = (source,) if isinstance(source, str) else source
    if path.startswith(tuple(d.strip("/") + "/" for d in directories)):
        return ChangeArea.SOURCE
    return ChangeArea.OTHER


# -- finding changes -----------------------------------------------------------------------


def diff_trees(
    base: Path,
    work: Path,
    *,
    source: str | tuple[str, ...],
    tests: str,
    limits: LimitsSettings | None = None,
    upper: bool = False,
    is_test_file: Callable[[str], bool] = is_test_module,
) -> Patch:
    """Everything added, modified or deleted in ``work`` against ``base``, caches left out,
    as a ``Patch``: one diff per area and one ``FileChange`` per path, sorted by path.
    With ``upper``, ``work`` is the upper directory of an overlay of ``base``: only what
    it holds is read. ``is_test_file`` is the test runner's rule (:func:`classify`).

    The trees are walked a directory at a time and files read one at a time. Past
    ``limits.files`` added entries, or ``limits.patch-size`` bytes of diff, it stops
    with ``LimitExceeded``; a changed file larger than its base version by more than
    what is left of the patch size is not read."""
    limits = limits or LimitsSettings()
    diffs: dict[ChangeArea, list[str]] = {area: [] for area in ChangeArea}
    files: list[FileChange] = []
    size = 0
    walked = (walk_upper if upper else walk)(base, work, files=limits.files, ignored=is_ignored)
    for path, old, new in walked:
        if old is not None and new is not None and _unchanged(old, new):
            continue
        growth = (new.size if new is not None else 0) - (old.size if old is not None else 0)
        if size + growth > limits.patch_size:
            _too_large(size + max(growth, 0), limits, walked)
        area = classify(path, source=source, tests=tests, is_test_file=is_test_file)
        text, change = _file_diff(path, old, new, area)
        size += len(text)
        if size > limits.patch_size:
            _too_large(size, limits, walked)
        if text:
            diffs[area].append(text)
            files.append(change)
    return Patch(
        source="".join(diffs[ChangeArea.SOURCE]),
        tests="".join(diffs[ChangeArea.TEST]),
        other="".join(diffs[ChangeArea.OTHER]),
        files=files,
    )


def _too_large(
    size: int, limits: LimitsSettings, rest: Iterator[tuple[str, Entry | None, Entry | None]]
) -> NoReturn:
    """Raise ``LimitExceeded`` for a patch of at least ``size`` bytes, adding the sizes of
    the files still to walk (not read) to say how large it would be."""
    for _, old, new in rest:
        if new is not None and not (old is not None and _same_stat(old, new)):
            size += new.size
    raise LimitExceeded(exceeded("patch-size", size, limits.patch_size))


def _same_stat(old: Entry, new: Entry) -> bool:
    return (old.symlink, old.executable, old.size, old.mtime_ns) == (
        new.symlink,
        new.executable,
        new.size,
        new.mtime_ns,
    )


def _unchanged(old: Entry, new: Entry) -> bool:
    """Cheap equality: same type, mode, size and mtime; content only when that fails."""
    if old.symlink != new.symlink or old.executable != new.executable or old.size != new.size:
        return False
    return old.mtime_ns == new.mtime_ns or old.same_content(new)


def _file_diff(
    path: str, old: Entry | None, new: Entry | None, area: ChangeArea
) -> tuple[str, FileChange]:
    """One path's diff (two when a file became a symlink or back) and its ``FileChange``."""
    old_data = old.content() if old is not None else None
    new_data = new.content() if new is not None else None
    if old is not None and new is not None and old.symlink != new.symlink:
        assert old_data is not None and new_data is not None
        removed, removed_binary = file_section(path, old.mode, None, old_data, None)
        added, added_binary = file_section(path, None, new.mode, None, new_data)
        text, binary, kind = removed + added, removed_binary or added_binary, ChangeKind.MODIFIED
    else:
        text, binary = file_section(
            path,
            old.mode if old is not None else None,
            new.mode if new is not None else None,
            old_data,
            new_data,
        )
        kind = (
            ChangeKind.ADDED
            if old is None
            else ChangeKind.DELETED
            if new is None
            else ChangeKind.MODIFIED
        )
    symlink = any(entry is not None and entry.symlink for entry in (old, new))
    return text, FileChange(path=path, kind=kind, area=area, binary=binary, symlink=symlink)


# -- writing diffs -------------------------------------------------------------------------


def file_section(
    path: str,
    old_mode: str | None,
    new_mode: str | None,
    old: bytes | None,
    new: bytes | None,
) -> tuple[str, bool]:
    """One ``diff --git`` section, as ``git diff --binary --full-index`` writes it; and
    whether it is a binary patch. Empty when nothing differs."""
    a_name, b_name = quote_path(f"a/{path}"), quote_path(f"b/{path}")
    lines = [f"diff --git {a_name} {b_name}\n"]
    old_oid = blob_id(old) if old is not None else NULL_OID
    new_oid = blob_id(new) if new is not None else NULL_OID
    if old_mode is None:
        lines.append(f"new file mode {new_mode}\n")
    elif new_mode is None:
        lines.append(f"deleted file mode {old_mode}\n")
    elif old_mode != new_mode:
        lines += [f"old mode {old_mode}\n", f"new mode {new_mode}\n"]
    if old_oid == new_oid:
        return ("".join(lines), False) if old_mode != new_mode else ("", False)
    same_mode = f" {old_mode}" if old_mode == new_mode else ""
    lines.append(f"index {old_oid}..{new_oid}{same_mode}\n")
    old_text, new_text = _text(old), _text(new)
    if old_text is None or new_text is None:
        lines.append(_binary_patch(old or b"", new or b""))
        return "".join(lines), True
    if old_text == new_text == "":
        return "".join(lines), False
    tab = "\t" if " " in path else ""
    lines.append(f"--- {a_name if old is not None else '/dev/null'}{tab}\n")
    lines.append(f"+++ {b_name if new is not None else '/dev/null'}{tab}\n")
    lines.extend(_hunks(_split_lines(old_text), _split_lines(new_text)))
    return "".join(lines), False


def blob_id(data: bytes) -> str:
    """The git blob id (SHA-1) of ``data``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _text(data: bytes | None) -> str | None:
    """``data`` as text, or ``None`` when it must be a binary patch. Absent is empty text."""
    if data is None:
        return ""
    if b"\0" in data[:TEXT_PROBE]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _split_lines(text: str) -> list[str]:
    """Lines ending with ``\\n`` (only: ``\\r`` and other breaks stay inside lines)."""
    lines = text.split("\n")
    last = lines.pop()
    result = [line + "\n" for line in lines]
    if last:
        result.append(last)
    return result


def _hunks(old: list[str], new: list[str]) -> Iterator[str]:
    matcher = difflib.SequenceMatcher(None, old, new)
    for group in matcher.get_grouped_opcodes(CONTEXT):
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from _prefixed(" ", old[i1:i2])
                continue
            if tag in ("replace", "delete"):
                yield from _prefixed("-", old[i1:i2])
            if tag in ("replace", "insert"):
                yield from _prefixed("+", new[j1:j2])


def _prefixed(prefix: str, lines: Iterable[str]) -> Iterator[str]:
    for line in lines:
        if line.endswith("\n"):
            yield prefix + line
        else:
            yield f"{prefix}{line}\n\\ No newline at end of file\n"


def _range(start: int, stop: int) -> str:
    """A hunk range as unified diffs write it: ``start,length``, ``start`` alone for one
    line, the line before for none."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start if length == 0 else start + 1},{length}"


def _binary_patch(old: bytes, new: bytes) -> str:
    """A git binary patch: the new content, then the old (so it also reverses)."""
    return f"GIT binary patch\n{_literal(new)}\n{_literal(old)}\n"


def _literal(data: bytes) -> str:
    """A ``literal`` hunk: zlib-deflated, in lines of up to 52 bytes base85-encoded, each
    prefixed with its length (``A``-``Z`` for 1-26, ``a``-``z`` for 27-52)."""
    deflated = zlib.compress(data)
    lines = [f"literal {len(data)}\n"]
    for start in range(0, len(deflated), 52):
        chunk = deflated[start : start + 52]
        size = len(chunk)
        marker = chr(ord("A") + size - 1) if size <= 26 else chr(ord("a") + size - 27)
        lines.append(marker + base64.b85encode(chunk, pad=True).decode("ascii") + "\n")
    return "".join(lines)


_ESCAPES = {"\a": "a", "\b": "b", "\t": "t", "\n": "n", "\v": "v", "\f": "f", "\r": "r",
            '"': '"', "\\": "\\"}  # fmt: skip


def quote_path(name: str) -> str:
    """``name`` as git writes it in a diff header: C-quoted when it holds a quote, a
    backslash, a control character or a byte that is not UTF-8 (``os.fsdecode``'s lone
    surrogate, written as the byte's octal escape); other characters, UTF-8 included,
    are left as they are, as with ``core.quotePath=false``. So every diff is valid
    UTF-8, whatever names the agent chose."""
    if not any(_odd(char) for char in name):
        return name
    quoted = []
    for char in name:
        if char in _ESCAPES:
            quoted.append("\\" + _ESCAPES[char])
        elif _odd(char):
            quoted.append(f"\\{os.fsencode(char)[0]:03o}")
        else:
            quoted.append(char)
    return '"' + "".join(quoted) + '"'


def _odd(char: str) -> bool:
    """Whether git quotes ``char`` in a name (``_ESCAPES`` aside, as an octal escape)."""
    code = ord(char)
    return char in _ESCAPES or code < 0x20 or code == 0x7F or 0xDC80 <= code <= 0xDCFF


def _unquote(name: str) -> str:
    """The inverse of git's C quoting (octal escapes are UTF-8 bytes)."""
    if not (len(name) >= 2 and name.startswith('"') and name.endswith('"')):
        return name
    reverse = {value: key for key, value in _ESCAPES.items()}
    body, out, index = name[1:-1], bytearray(), 0
    while index < len(body):
        char = body[index]
        if char != "\\" or index + 1 == len(body):
            out += char.encode("utf-8")
            index += 1
            continue
        following = body[index + 1]
        if following in "01234567":
            out.append(int(body[index + 1 : index + 4], 8) & 0xFF)
            index += 4
        else:
            out += reverse.get(following, following).encode("utf-8")
            index += 2
    return out.decode("utf-8", "surrogateescape")


# -- applying diffs ------------------------------------------------------------------------


def apply_patch(tree: Path | TestTree, diff: str) -> None:
    """Apply ``diff`` (one of a ``Patch``'s) to ``tree`` with ``git apply`` (to a
    :class:`~bugbout.core.plumbing.trees.testtree.TestTree`'s edits, the paths it names exposed
    first).

    Every path the diff touches is checked first: a path that is absolute, has a ``..``
    component, lies under ``.git`` or goes through a symlink makes it a ``PatchError``,
    and nothing is written. A diff that does not apply is a ``PatchError`` naming the file;
    ``git apply`` writes nothing unless every file applies.
    """
    if not diff.strip():
        return
    try:
        data = diff.encode("utf-8")
    except UnicodeEncodeError:
        raise PatchError("the patch is not valid UTF-8") from None
    root = (tree.edits if isinstance(tree, TestTree) else tree).resolve()
    if not root.is_dir():
        raise PatchError(f"cannot apply a patch to {root}: not a directory")
    touched = _touched(root, data)
    if not touched.paths:
        raise PatchError("the patch names no file: it is not in git apply format")
    if isinstance(tree, TestTree):
        tree.expose(touched.paths)
    for path in sorted(touched.paths):
        _check_inside(root, path, touched)
    result = _git_apply(root, data, "--whitespace=nowarn")
    if result.returncode:
        raise PatchError(_apply_failure(result.stderr.decode(errors="replace"), root))


@dataclass
class _Touched:
    """What ``git apply`` reads in a patch: the paths it touches, the symlinks it creates,
    the paths it deletes."""

    paths: set[str]
    symlinks: set[str]
    deleted: set[str]


_SUMMARY = re.compile(r" (create|delete) mode (\d{6}) (.+)| mode change \d{6} => (\d{6}) (.+)")


def _touched(tree: Path, data: bytes) -> _Touched:
    """What the patch touches, from one ``git apply --numstat --summary -z``: its numstat
    records end with a NUL each (a path never holds one), its summary's lines follow."""
    read = _git_apply(tree, data, "--numstat", "--summary", "-z")
    if read.returncode:
        raise PatchError(_apply_failure(read.stderr.decode(errors="replace"), tree))
    numstat, _, summary = read.stdout.rpartition(b"\0")
    tokens = numstat.decode("utf-8", "surrogateescape").split("\0")
    touched = _Touched(set(), set(), set())
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if not token:
            continue
        fields = token.split("\t", 2)
        if len(fields) != 3:
            raise PatchError(f"cannot read git apply's summary of the patch: {token!r}")
        if fields[2]:
            touched.paths.add(fields[2])
        else:  # a rename or copy: its old and new paths follow
            touched.paths.update(tokens[index : index + 2])
            index += 2
    for line in summary.decode("utf-8", "surrogateescape").splitlines():
        match = _SUMMARY.fullmatch(line)
        if match is None:
            continue
        if match[1] == "delete":
            touched.deleted.add(_unquote(match[3]))
        elif (match[2] or match[4]) == SYMLINK:
            touched.symlinks.add(_unquote(match[3] or match[5]))
    return touched


def check_name(path: str) -> None:
    """Refuse a path that is not relative and inside its tree, or that lies in a ``.git``
    (whatever the tree holds)."""
    parts = path.split("/")
    if (
        not path
        or "\0" in path
        or path.startswith("/")
        or any(part in ("", ".", "..") for part in parts)
    ):
        raise PatchError(f"refusing the patch: {path!r} is not a path inside the tree")
    if any(part.lower() == ".git" for part in parts):
        raise PatchError(f"refusing the patch: {path!r} is inside a .git directory")


def _check_inside(tree: Path, path: str, touched: _Touched) -> None:
    """Refuse a path that could write outside ``tree`` or into a ``.git``."""
    check_name(path)
    parts = path.split("/")
    for depth in range(1, len(parts)):
        prefix = "/".join(parts[:depth])
        location = tree / prefix
        emptied = path in touched.deleted and location.is_dir() and not location.is_symlink()
        created = prefix in touched.symlinks and not emptied  # a folder made a symlink
        existing = prefix not in touched.deleted and location.is_symlink()
        if created or existing:
            raise PatchError(f"refusing the patch: {path!r} is beyond the symlink {prefix!r}")


def _git_apply(tree: Path, data: bytes, *options: str) -> subprocess.CompletedProcess[bytes]:
    """``git apply`` in ``tree`` as outside any repository, whatever the user's git config:
    no repository above ``tree`` is found, no config file is read."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        GIT_CEILING_DIRECTORIES=str(tree.parent),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        LC_ALL="C",
    )
    if "GIT_EXEC_PATH" in os.environ:
        env["GIT_EXEC_PATH"] = os.environ["GIT_EXEC_PATH"]
    try:
        return subprocess.run(
            ["git", "apply", *options, "-"],
            input=data,
            cwd=tree,
            env=env,
            capture_output=True,
            check=False,
        )
    except OSError as exc:
        raise PatchError(f"cannot run git apply: {exc}") from exc


def _apply_failure(stderr: str, tree: Path) -> str:
    """``git apply``'s errors on one line: they name the file that does not apply."""
    errors = [line.removeprefix("error: ").strip() for line in stderr.splitlines()]
    errors = list(dict.fromkeys(line for line in errors if line)) or ["(no message)"]
    return f"the patch does not apply to {tree}: " + "; ".join(errors[:4])
