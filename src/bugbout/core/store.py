"""The results store: ``.bugbout/`` beside ``bugbout.yaml``.

Every write is atomic (a temporary file in the same directory, fsynced, then renamed),
so a crash at any point leaves each record either as it was or as it is now.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from bugbout.core.errors import BugboutError, StoreError

RecordT = TypeVar("RecordT", bound=BaseModel)

TASKS = "tasks.json"
ORACLES = "oracles.json"


class Store:
    """Reads and writes the records of one project."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, name: str) -> Path:
        return self.root / name

    def ensure(self) -> None:
        """Create the store, which ignores itself in git."""
        self.root.mkdir(parents=True, exist_ok=True)
        ignore = self.root / ".gitignore"
        if not ignore.exists():
            write_atomic(ignore, "# bugbout's results; delete this file to commit them\n*\n")

    def write(self, name: str, record: BaseModel) -> Path:
        """Write ``record`` as ``name`` atomically."""
        self.ensure()
        path = self.path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, record.model_dump_json(indent=2, by_alias=True) + "\n")
        return path

    def read(self, name: str, model: type[RecordT]) -> RecordT | None:
        """The record stored as ``name``, or ``None`` if there is none; a corrupt record is
        an error that says how to recover."""
        path = self.path(name)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            return model.model_validate_json(text)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise StoreError(
                f"{path} is corrupt ({where or 'file'}: {first['msg']}); "
                "move it aside and run the command again to rebuild it"
            ) from None

    @contextlib.contextmanager
    def hold(self, name: str) -> Iterator[None]:
        """Wait for, then hold, the shared record ``name`` (``ground-truth``, an attempt's
        path): concurrent sweep jobs compute it once and the others read it. Released even
        on a crash."""
        self.ensure()
        path = self.root / "locks" / (name.replace("/", "%") + ".lock")
        path.parent.mkdir(exist_ok=True)
        with path.open("a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the store for one bout; a second is refused. Released even on a crash."""
        self.ensure()
        with (self.root / "lock").open("a+") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise BugboutError(
                    f"another bugbout is already working on {self.root}; "
                    "wait for it to finish (or stop it) and try again"
                ) from None
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


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
