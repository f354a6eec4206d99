"""Git plumbing: one streamed ``git log`` for mining, a ``cat-file`` batch for blobs,
and ``git archive`` for trees. Nothing here writes to the repository."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from bugbout.core.errors import BugboutError

RECORD = "\x1e"
FIELD = "\x1f"
LOG_FORMAT = "%x1e%H%x1f%P%x1f%cI%x1f%B%x1f"


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


@dataclass(frozen=True)
class Commit:
    """A commit as the first-parent walk sees it."""

    sha: str
    parents: tuple[str, ...]
    date: str
    message: str
    changes: tuple[Change, ...] = field(default=())

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
        """Run ``git <args>`` in the repository and return its output."""
        result = subprocess.run(
            ["git", "-C", str(self.repository), *args],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            message = (result.stderr.strip().splitlines() or ["(no message)"])[-1]
            raise GitError(f"git {args[0]} failed in {self.repository}: {message}")
        return result.stdout

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
                "set tasks.ref to one that exists"
            ) from None

    def first_parent_log(self, ref: str) -> Iterator[Commit]:
        """Every commit on the first-parent line of ``ref``, newest first, with its changes.

        A merge commit's changes are its diff against its first parent.
        """
        command = [
            "git", "-C", str(self.repository), "log", "--first-parent",
            "--diff-merges=first-parent", "--name-status", "-M", "-z",
            "--no-color", "--no-ext-diff", f"--format={LOG_FORMAT}", ref, "--",
        ]  # fmt: skip
        with subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=1 << 20
        ) as process:
            assert process.stdout is not None
            pending = ""
            while chunk := process.stdout.read(1 << 20):
                pending += chunk.decode("utf-8", "surrogateescape")
                *complete, pending = pending.split(RECORD)
                for record in complete:
                    if record:
                        yield _parse_commit(record)
            if pending:
                yield _parse_commit(pending)
            stderr = process.stderr.read().decode() if process.stderr else ""
        if process.returncode not in (0, None):
            raise GitError(f"git log failed in {self.repository}: {stderr.strip()}")

    def blob(self, rev: str, path: str) -> tuple[str, bytes] | None:
        """The blob id and content of ``path`` at ``rev``, or ``None`` when it is not there."""
        process = self._batch_process()
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(f"{rev}:{path}\n".encode("utf-8", "surrogateescape"))
        process.stdin.flush()
        line = process.stdout.readline().decode("utf-8", "surrogateescape")
        if line.endswith((" missing\n", " ambiguous\n")):
            return None
        blob_id, kind, size = line.split()
        data = process.stdout.read(int(size) + 1)
        if kind != "blob":
            return None
        return blob_id, data[:-1]

    def export(self, rev: str, destination: Path) -> None:
        """Write the tree of ``rev`` into ``destination`` (no ``.git``).

        Through a private index and ``checkout-index``, not ``git archive``: the tree's
        ``export-ignore`` and ``export-subst`` attributes (some projects mark ``tests/``)
        must not change what the tests see.
        """
        destination.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="bugbout-index-") as scratch:
            env = {**os.environ, "GIT_INDEX_FILE": str(Path(scratch) / "index")}
            for args in (
                ["read-tree", rev],
                ["checkout-index", "--all", "--force", f"--prefix={destination}/"],
            ):
                result = subprocess.run(
                    ["git", "-C", str(self.repository), *args],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if result.returncode:
                    message = (result.stderr.strip().splitlines() or ["(no message)"])[-1]
                    raise GitError(f"cannot export {rev} from {self.repository}: {message}")

    def close(self) -> None:
        if self._batch is not None:
            if self._batch.stdin:
                self._batch.stdin.close()
            self._batch.wait()
            if self._batch.stdout:
                self._batch.stdout.close()
            self._batch = None

    def _batch_process(self) -> subprocess.Popen[bytes]:
        if self._batch is None:
            self._batch = subprocess.Popen(
                ["git", "-C", str(self.repository), "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        return self._batch


def _parse_commit(record: str) -> Commit:
    sha, parents, date, message, rest = record.split(FIELD, 4)
    tokens = rest.lstrip("\0\n").split("\0")
    changes: list[Change] = []
    index = 0
    while index < len(tokens):
        status = tokens[index].strip()
        if not status:
            index += 1
            continue
        if status[0] in "RC":
            changes.append(Change(status[0], tokens[index + 2], tokens[index + 1]))
            index += 3
        else:
            changes.append(Change(status[0], tokens[index + 1]))
            index += 2
    return Commit(sha, tuple(parents.split()), date, message, tuple(changes))
