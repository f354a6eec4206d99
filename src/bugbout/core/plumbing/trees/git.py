"""Git plumbing: one streamed ``git log`` for mining, a ``cat-file`` batch for objects,
and a private index for trees. Nothing here writes to the repository.

Every file name git gives is read from NUL-separated output and decoded with
``os.fsdecode``, so any name (newlines, tabs, quotes, bytes that are not UTF-8) comes back
exactly and can be passed back to the filesystem or to git. Objects are asked of
``cat-file`` by object id or by revision, never by ``<rev>:<path>``: a path is found by
walking the trees, so no name can put the batch out of step.
"""

from __future__ import annotations

import functools
import os
import re
import secrets
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import NamedTuple

from bugbout.core.contract.errors import BugboutError

_REQUEST = re.compile(r"[^\s\x00-\x1f\x7f]+")
"""What may be written to ``cat-file --batch``: one line, no spaces."""
_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_BATCH_ROUND = 512
"""Requests written to ``cat-file --batch`` before reading: 21 KiB of ids, well within a
pipe's buffer, so git never waits on a full pipe while this process is still writing."""
_GITLINK = b"160000"
"""The mode of a submodule entry: its id is a commit of another repository."""
_TREE = b"40000"
"""The mode of a tree entry, as a raw tree object writes it."""


class GitError(BugboutError):
    """A git command failed."""


@dataclass(frozen=True)
class Change:
    """One file a commit changed, against its first parent."""

    status: str
    """``A`` added, ``M`` modified, ``D`` deleted, ``R`` renamed, ``T`` type change, ..."""
    path: str
    old_path: str | None = None
    """For a rename, the path before."""
    blob: str | None = None
    """The file's object id after the commit; ``None`` when deleted or a submodule."""
    old_blob: str | None = None
    """Its object id at the first parent (``old_path``'s for a rename); ``None`` when added."""


class TreeEntry(NamedTuple):
    """One entry of a tree object: its mode, its name's bytes and its object's id."""

    mode: bytes
    name: bytes
    object_id: str

    @property
    def is_tree(self) -> bool:
        return self.mode == _TREE

    @property
    def is_blob(self) -> bool:
        """A file's content (a symbolic link's included), not a tree nor a submodule."""
        return self.mode not in (_TREE, _GITLINK)


@dataclass(frozen=True)
class Commit:
    """A commit as the first-parent walk sees it."""

    sha: str
    parents: tuple[str, ...]
    date: str
    message: str
    raw_changes: bytes = field(default=b"", repr=False)
    """Its changes as ``git log --raw -z`` gives them: read through ``changes``."""

    @functools.cached_property
    def changes(self) -> tuple[Change, ...]:
        """The files it changed, parsed on first use (most commits are never asked)."""
        return tuple(_parse_changes(self.raw_changes))

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0].strip()

    @property
    def body(self) -> str:
        parts = self.message.split("\n", 1)
        return parts[1].strip() if len(parts) > 1 else ""

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1


class Git:
    """Read-only access to one repository."""

    def __init__(self, repository: Path) -> None:
        self.repository = repository
        self._batch: subprocess.Popen[bytes] | None = None
        self._asking = threading.Lock()
        """One request at a time on the batch: test runs of a task share it from threads."""

    def __enter__(self) -> Git:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def run(self, *args: str) -> str:
        """Run ``git <args>`` in the repository and return its output (``os.fsdecode``d)."""
        return os.fsdecode(self._output(*args))

    def message(self, rev: str) -> str:
        """The full message of commit ``rev`` as ``git log --format=%B`` gives it (in UTF-8
        from its ``encoding``, a newline after it; bytes that are not UTF-8 replaced), read
        from the object store: a fix's statement asks it of each task."""
        found = self._object(f"{rev}^{{commit}}")
        if found is None:
            raise GitError(f"git log failed in {self.repository}: bad revision '{rev}'")
        headers, _, body = found[2].partition(b"\n\n")
        named = [line[9:] for line in headers.split(b"\n") if line.startswith(b"encoding ")]
        try:
            return body.decode(named[0].decode() if named else "utf-8") + "\n"
        except (LookupError, UnicodeDecodeError):  # git then gives the bytes as they are
            return body.decode("utf-8", "replace") + "\n"

    def is_repository(self) -> bool:
        try:
            self.run("rev-parse", "--git-dir")
        except GitError:
            return False
        return True

    def default_ref(self) -> str:
        """The default branch: ``origin/HEAD`` when it is set, else ``HEAD``."""
        try:
            return self.run("symbolic-ref", "--quiet", "refs/remotes/origin/HEAD").strip()
        except GitError:
            return "HEAD"

    def resolve(self, ref: str) -> str:
        try:
            return self.run("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").strip()
        except GitError:
            raise GitError(
                f"{ref!r} is not a branch or commit of {self.repository}; "
                "set miner.ref to one that exists"
            ) from None

    def first_parent_log(self, ref: str, *, since: int | None = None) -> Iterator[Commit]:
        """Every commit on the first-parent line of ``ref``, newest first, with its changes
        and their object ids; with ``since`` (a Unix time), the walk stops at the first
        commit committed before it.

        A merge commit's changes are its diff against its first parent. Each commit's
        header is fenced by a random token no commit can anticipate, and the changes
        are NUL-separated, so no message or file name can split or shift a record.
        """
        token = secrets.token_hex(16)
        fence = b"\0" + token.encode()
        with subprocess.Popen(
            log_command(self.repository, ref, token, since=since),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
        ) as process:
            assert process.stdout is not None
            pending = b""
            pieces = 0  # before the first fence, then header, changes, header, ...
            header = b""
            while chunk := process.stdout.read(1 << 20):  # unbuffered: what git wrote so far
                *complete, pending = (pending + chunk).split(fence)
                for piece in complete:
                    if pieces % 2:
                        header = piece
                    elif pieces:
                        yield _parse_commit(header, piece)
                    pieces += 1
            if pieces % 2 == 0 and pieces:
                yield _parse_commit(header, pending)
            stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
        if process.returncode not in (0, None):
            raise GitError(f"git log failed in {self.repository}: {stderr.strip()}")

    def content(self, object_id: str) -> bytes | None:
        """The content of blob ``object_id``, or ``None`` when it is not a blob here."""
        if not _OBJECT_ID.fullmatch(object_id):
            raise GitError(f"{object_id!r} is not an object id")
        found = self._object(object_id)
        return found[2] if found is not None and found[1] == "blob" else None

    def contents(self, object_ids: Iterable[str]) -> dict[str, bytes | None]:
        """:meth:`content` of each id, asked of ``cat-file`` in one batch: every request
        is written before the answers are read (in rounds small enough for a pipe's
        buffer), so a commit's blobs cost one round trip instead of one each."""
        wanted = list(dict.fromkeys(object_ids))
        for object_id in wanted:
            if not _OBJECT_ID.fullmatch(object_id):
                raise GitError(f"{object_id!r} is not an object id")
        found: dict[str, bytes | None] = {}
        with self._asking:
            for start in range(0, len(wanted), _BATCH_ROUND):
                names = wanted[start : start + _BATCH_ROUND]
                for name, answer in zip(names, self._ask(names), strict=True):
                    found[name] = answer[2] if answer is not None and answer[1] == "blob" else None
        return found

    def blob(self, rev: str, path: str) -> tuple[str, bytes] | None:
        """The blob id and content of ``path`` at ``rev``, or ``None`` when it is not there.

        Found by walking ``rev``'s trees one name at a time, so ``path`` may hold any
        byte git allows in a name.
        """
        found = self._object(f"{rev}^{{tree}}")
        for name in os.fsencode(path).split(b"/"):
            if found is None or found[1] != "tree":
                return None
            entry = _tree_entry(found[2], name, len(found[0]) // 2)
            found = self._object(entry) if entry is not None else None
        if found is None or found[1] != "blob":
            return None
        return found[0], found[2]

    def tree(self, rev: str) -> str | None:
        """The id of ``rev``'s tree, or ``None`` when ``rev`` names no commit or tree."""
        found = self._object(f"{rev}^{{tree}}")
        return found[0] if found is not None and found[1] == "tree" else None

    def trees(self, object_ids: Iterable[str]) -> dict[str, tuple[TreeEntry, ...]]:
        """The entries of each tree of ``object_ids``, asked of ``cat-file`` in one batch
        (as :meth:`contents`); an id that is not a tree here has none."""
        wanted = list(dict.fromkeys(object_ids))
        for object_id in wanted:
            if not _OBJECT_ID.fullmatch(object_id):
                raise GitError(f"{object_id!r} is not an object id")
        found: dict[str, tuple[TreeEntry, ...]] = {}
        with self._asking:
            for start in range(0, len(wanted), _BATCH_ROUND):
                names = wanted[start : start + _BATCH_ROUND]
                for name, answer in zip(names, self._ask(names), strict=True):
                    tree = answer[2] if answer is not None and answer[1] == "tree" else b""
                    found[name] = _tree_entries(tree, len(name) // 2)
        return found

    def export(self, rev: str, destination: Path, paths: Iterable[bytes] | None = None) -> None:
        """Write the tree of ``rev`` into ``destination`` (no ``.git``); with ``paths``,
        only those of its files (each written as the whole export writes it).

        Through a private index and ``checkout-index``, not ``git archive``: the tree's
        ``export-ignore`` and ``export-subst`` attributes (some projects mark ``tests/``)
        must not change what the tests see.
        """
        destination.mkdir(parents=True, exist_ok=True)
        which = ["--all"] if paths is None else ["-z", "--stdin"]
        named = b"".join(path + b"\0" for path in paths or ())
        with tempfile.TemporaryDirectory(prefix="bugbout-index-") as scratch:
            env = {**os.environ, "GIT_INDEX_FILE": str(Path(scratch) / "index")}
            for args, given in (
                (["read-tree", rev], b""),
                (["checkout-index", *which, "--force", f"--prefix={destination}/"], named),
            ):
                result = subprocess.run(
                    ["git", "-C", str(self.repository), *args],
                    env=env,
                    input=given,
                    capture_output=True,
                    check=False,
                )
                if result.returncode:
                    raise GitError(
                        f"cannot export {rev} from {self.repository}: {_last_line(result.stderr)}"
                    )

    def close(self) -> None:
        if self._batch is not None:
            if self._batch.stdin:
                self._batch.stdin.close()
            self._batch.wait()
            if self._batch.stdout:
                self._batch.stdout.close()
            self._batch = None

    def _output(self, *args: str) -> bytes:
        result = subprocess.run(
            ["git", "-C", str(self.repository), *args], capture_output=True, check=False
        )
        if result.returncode != 0:
            raise GitError(
                f"git {args[0]} failed in {self.repository}: {_last_line(result.stderr)}"
            )
        return result.stdout

    def _object(self, name: str) -> tuple[str, str, bytes] | None:
        """The id, type and content of object ``name`` (an id or ``<rev>^{tree}``), or
        ``None`` when there is none."""
        if not _REQUEST.fullmatch(name):
            raise GitError(f"{name!r} is not an object name")
        with self._asking:
            return self._ask([name])[0]

    def _ask(self, names: list[str]) -> list[tuple[str, str, bytes] | None]:
        """Write every request of ``names``, then read their answers in order (the caller
        holds ``_asking``)."""
        process = self._batch_process()
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(b"".join(name.encode() + b"\n" for name in names))
        process.stdin.flush()
        answers: list[tuple[str, str, bytes] | None] = []
        for _ in names:
            header = process.stdout.readline().split()
            if len(header) != 3 or not header[2].isdigit():
                if not header:
                    raise GitError(f"git cat-file stopped in {self.repository}")
                answers.append(None)  # missing or ambiguous: no content follows
                continue
            size = int(header[2])
            data = process.stdout.read(size + 1)
            if len(data) != size + 1:
                raise GitError(f"git cat-file stopped in {self.repository}")
            answers.append((header[0].decode(), header[1].decode(), data[:-1]))
        return answers

    def _batch_process(self) -> subprocess.Popen[bytes]:
        if self._batch is None:
            self._batch = subprocess.Popen(
                ["git", "-C", str(self.repository), "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        return self._batch


def log_command(repository: Path, ref: str, token: str, *, since: int | None = None) -> list[str]:
    """The ``git log`` of :meth:`Git.first_parent_log`: each commit's header (id, parents,
    date, message) between two ``NUL + token`` fences, then its ``--raw -z`` changes.
    ``--since`` makes git stop the walk, not filter it: nothing older is read."""
    stop = [] if since is None else [f"--since=@{since}"]
    return [
        "git", "-C", str(repository), "log", "--first-parent", "--diff-merges=first-parent",
        "--raw", "--no-abbrev", "-M", "-z", "--no-color", "--no-ext-diff", "--no-relative",
        f"--format=%x00{token}%H%x00%P%x00%cI%x00%B%x00{token}", *stop, ref, "--",
    ]  # fmt: skip


def _last_line(stderr: bytes) -> str:
    return (stderr.decode(errors="replace").strip().splitlines() or ["(no message)"])[-1]


def _tree_entries(tree: bytes, id_size: int) -> tuple[TreeEntry, ...]:
    """The entries of a raw tree object."""
    entries: list[TreeEntry] = []
    position = 0
    while position < len(tree):
        space = tree.index(b" ", position)
        end = tree.index(b"\0", space)
        mode, name = tree[position:space], tree[space + 1 : end]
        entries.append(TreeEntry(mode, name, tree[end + 1 : end + 1 + id_size].hex()))
        position = end + 1 + id_size
    return tuple(entries)


def _tree_entry(tree: bytes, name: bytes, id_size: int) -> str | None:
    """The object id of entry ``name`` in a raw tree object, or ``None``."""
    position = 0
    while position < len(tree):
        space = tree.index(b" ", position)
        end = tree.index(b"\0", space)
        if tree[space + 1 : end] == name:
            return tree[end + 1 : end + 1 + id_size].hex()
        position = end + 1 + id_size
    return None


def _parse_commit(header: bytes, changes: bytes) -> Commit:
    sha, parents, date, message = header.split(b"\0", 3)
    return Commit(
        sha.decode(),
        tuple(parents.decode().split()),
        date.decode(),
        message.decode("utf-8", "replace"),
        changes,
    )


def _parse_changes(raw: bytes) -> Iterator[Change]:
    """The entries of ``git log --raw -z``: ``:<modes> <ids> <status>``, then the path
    (two for a rename or copy), each NUL-terminated."""
    tokens = raw.split(b"\0")
    index = 0
    while index < len(tokens):
        meta = tokens[index].lstrip(b"\n")
        index += 1
        if not meta:
            continue
        fields = meta[1:].split(b" ")
        if not meta.startswith(b":") or len(fields) != 5:
            raise GitError(f"unexpected git log output: {meta[:80]!r}")
        old_mode, new_mode, old_id, new_id, status = fields
        count = 2 if status[:1] in (b"R", b"C") else 1
        paths = [os.fsdecode(path) for path in tokens[index : index + count] if path]
        index += count
        if len(paths) != count:
            raise GitError(f"unexpected git log output: no path after {meta[:80]!r}")
        yield Change(
            status[:1].decode(),
            paths[-1],
            paths[0] if count == 2 else None,
            blob=_blob_id(new_mode, new_id),
            old_blob=_blob_id(old_mode, old_id),
        )


def _blob_id(mode: bytes, object_id: bytes) -> str | None:
    """The id of a file's content, or ``None`` for an absent file or a submodule."""
    if mode == _GITLINK or not object_id.strip(b"0"):
        return None
    return object_id.decode()


def diff_lines(diff: str, *, context: bool = False) -> Iterator[str]:
    """The lines a unified diff adds and removes, each with its ``+`` or ``-``, in order
    (its file headers left out); with ``context``, the hunks' unchanged lines too (``" "``)."""
    kept = ("+", "-", " ") if context else ("+", "-")
    in_hunk = False
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            in_hunk = False
        elif line.startswith("@@"):
            in_hunk = True
        elif in_hunk and line[:1] in kept:
            yield line
