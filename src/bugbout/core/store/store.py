"""The results store: ``.bugbout/`` beside ``bugbout.yaml``.

Every write is atomic (a temporary file in the same directory, fsynced, then renamed),
so a crash at any point leaves each record either as it was or as it is now. A record
that cannot be read is an error naming the file; one about to be rebuilt without being
read (``tasks.json``) is kept aside instead, with a warning.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from bugbout.core.contract.errors import StoreError
from bugbout.core.store.locks import Holder, exclusive
from bugbout.sandbox.locking import locked

RecordT = TypeVar("RecordT", bound=BaseModel)
MIN_FREE = 50_000_000
"""Bytes a store's disk must have free before a bout starts: its records and reports."""

TASKS = "tasks.json"
ORACLES = "oracles.json"
MINING = "mining.json"
"""The last mining result, with the key it is reused by."""
VERDICTS = "verdicts.json"
RESOLUTIONS = "resolutions.json"
AUDITS = "audits.json"
JOB = "job.json"
"""A bout's own record: what it raced and scored (in the store, or a sweep job's folder)."""
MATRICES = "matrices"
EVIDENCE = "evidence"
"""Matrices, scores and audits by what determines them, shared by every bout on a store."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(name: str) -> str:
    """``name`` as one path component."""
    return _UNSAFE.sub("_", name)


def attempt_path(task_id: str, contestant: str, key: str) -> str:
    """Where an attempt is stored, relative to the store: by task, name and key, so sweep
    jobs that give one name different settings (e.g. a model sweep) never share a record."""
    return f"attempts/{task_id}/{safe_name(contestant)}/{key[:16]}.json"


def matrix_path(task_id: str) -> str:
    """Where a bout keeps a task's cross-examination matrix."""
    return f"{MATRICES}/{task_id}.json"


class Store:
    """Reads and writes the records of one project."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, name: str) -> Path:
        return self.root / name

    def ensure(self) -> None:
        """Create the store, which ignores itself in git."""
        with writing(self.root):
            self.root.mkdir(parents=True, exist_ok=True)
            ignore = self.root / ".gitignore"
            if not ignore.exists():
                write_atomic(ignore, "# bugbout's results; delete this file to commit them\n*\n")

    def write(self, name: str, record: BaseModel) -> Path:
        """Write ``record`` as ``name`` atomically; a store that cannot take it is a
        :class:`StoreError` in one line."""
        self.ensure()
        path = self.path(name)
        with writing(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, record.model_dump_json(indent=2, by_alias=True) + "\n")
        return path

    def check_writable(self, needed: int = MIN_FREE) -> None:
        """Before a bout spends anything: the store takes a file and its disk has
        ``needed`` bytes free, else a :class:`StoreError` saying which and what to do."""
        self.ensure()
        with writing(self.root), tempfile.TemporaryFile(dir=self.root) as probe:
            probe.write(b"bugbout")  # its own name: parallel sweep jobs probe at once
            probe.flush()
        free = shutil.disk_usage(self.root).free
        if free < needed:
            raise StoreError(
                f"{self.root} has {free / 1e6:.1f} MB free, less than the "
                f"{needed / 1e6:.0f} MB a bout's records and reports need: free space on its "
                "disk, or move the project"
            )

    def read(self, name: str, model: type[RecordT]) -> RecordT | None:
        """The record stored as ``name``, or ``None`` if there is none; a corrupt record
        (truncated, not UTF-8, not the model) is an error that says how to recover."""
        path = self.path(name)
        try:
            return _load(path, model)
        except ValidationError as exc:
            raise StoreError(
                f"{path} is corrupt ({_first_error(exc)}); "
                "move it aside and run the command again to rebuild it"
            ) from None

    def set_aside_if_corrupt(
        self, name: str, model: type[BaseModel], warn: Callable[[str], None]
    ) -> None:
        """Before ``name`` is rebuilt without being read: if the record there cannot be
        read, rename it ``<name>.corrupt-<time>`` and say so, so nothing goes silently."""
        path = self.path(name)
        try:
            _load(path, model)
        except ValidationError as exc:
            aside = path.with_name(f"{path.name}.corrupt-{datetime.now():%Y%m%d-%H%M%S-%f}")
            path.rename(aside)
            warn(f"{path} is corrupt ({_first_error(exc)}): rebuilding it; kept it as {aside}")

    @contextlib.contextmanager
    def hold(self, name: str) -> Iterator[None]:
        """Wait for, then hold, the shared record ``name`` (an attempt's path): concurrent
        bouts compute it once and the others read it. Released even on a crash."""
        self.ensure()
        with locked(self.root / "locks" / (name.replace("/", "%") + ".lock")):
            yield

    @contextlib.contextmanager
    def lock(self, warn: Callable[[str], None] = lambda message: None) -> Iterator[None]:
        """Hold the store for one bout; a second is refused at once, told the holder's pid
        and command. Released even on a crash."""
        self.ensure()
        doing = f"already working on {self.root}"
        with writing(self.root / "lock"):
            (self.root / "lock").open("a").close()  # a read-only store: one line, not a trace
        with exclusive(self.root / "lock", Holder.this_process(), doing=doing, warn=warn):
            yield

    @contextlib.contextmanager
    def claim(
        self, name: str, doing: str, *, sweep: str = "", warn: Callable[[str], None]
    ) -> Iterator[None]:
        """Hold the lock ``name`` (``ground-truth``) for one bout: refused at once, told
        the holder's pid and command (``another bugbout is <doing>``), unless the holder
        is a job of the same ``sweep``, which is waited for. Released even on a crash."""
        self.ensure()
        path = self.root / "locks" / f"{name}.lock"
        path.parent.mkdir(exist_ok=True)
        with exclusive(path, Holder.this_process(sweep), doing=doing, warn=warn):
            yield


@contextlib.contextmanager
def writing(path: Path) -> Iterator[None]:
    """Writing to ``path`` in the store: an ``OSError`` (a read-only or full disk, no
    permission) is a :class:`StoreError` that says so in one line."""
    try:
        yield
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            hint = "its disk is full: free space on it, or move the project"
        elif exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            hint = "make it writable (or move the project where it can be written)"
        else:
            hint = "check the disk and its permissions"
        raise StoreError(f"cannot write {path}: {exc.strerror or exc}; {hint}") from None


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically."""
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(descriptor, 0o644)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        Path(temporary).replace(path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _load(path: Path, model: type[RecordT]) -> RecordT | None:
    """The record in ``path``, ``None`` if there is none; raises ``ValidationError`` when
    it is corrupt, and a file that cannot be read is a ``StoreError``."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from None
    return model.model_validate_json(data)


def _first_error(exc: ValidationError) -> str:
    """Where and what the first problem of a record is, in a few words."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where or 'file'}: {first['msg']}"
