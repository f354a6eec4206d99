"""Reading a file an agent could write: its logs, its adapter's output files.

Such a file may be anything the agent made of it: a symbolic link to a secret of the
user running bugbout (links resolve in bugbout's view of the machine, not the agent's),
a link to ``/dev/zero``, a FIFO that blocks whoever opens it, a huge file. Every read
goes through :func:`read_untrusted`, which opens the name itself without following it
and without blocking, reads only a regular file, and reads at most a bound; anything
else is an :class:`UntrustedFileError` saying what the agent left there.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from bugbout.core.contract.errors import BugboutError

READ_LIMIT = 5_000_000
"""The most bytes read of one such file by default: the log cap (``run.log-limit``)."""

_CHUNK = 1 << 16
_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


class UntrustedFileError(BugboutError):
    """A file the agent could write is not one bugbout reads: not a regular file (a link,
    a FIFO, a device...), or larger than the bound. Recorded as the agent's doing."""


def read_untrusted(path: Path, *, limit: int = READ_LIMIT, tail: bool = False) -> str | None:
    """The text of the regular file ``path`` (undecodable bytes replaced), or ``None``
    when there is none. Its last name is never followed and it is never waited on;
    only its folder is trusted. A file over ``limit`` bytes is an error, or with
    ``tail`` only its last ``limit`` bytes are read."""
    data = read_untrusted_bytes(path, limit=limit, tail=tail)
    return None if data is None else data.decode("utf-8", errors="replace")


def read_untrusted_bytes(
    path: Path, *, limit: int = READ_LIMIT, tail: bool = False
) -> bytes | None:
    """The bytes of the regular file ``path``, as :func:`read_untrusted` reads them."""
    try:
        seen = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:  # e.g. its folder locked
        raise UntrustedFileError(f"cannot read {shown(path)}: {exc.strerror}") from None
    _check_kind(path, seen.st_mode)  # never open a FIFO or a device at all
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):  # replaced by a link meanwhile
            raise UntrustedFileError(_kind_message(path, "a symbolic link")) from None
        if exc.errno == errno.ENXIO:
            raise UntrustedFileError(_kind_message(path, "a socket")) from None
        raise UntrustedFileError(f"cannot read {shown(path)}: {exc.strerror}") from None
    try:
        found = os.fstat(fd)
        _check_kind(path, found.st_mode)
        if tail:
            os.lseek(fd, max(found.st_size - limit, 0), os.SEEK_SET)
        data = _read_at_most(fd, limit + (0 if tail else 1))
    except OSError as exc:
        raise UntrustedFileError(f"cannot read {shown(path)}: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise UntrustedFileError(f"{shown(path)} is larger than {_size(limit)}: not read")
    return data


def shown(path: Path) -> str:
    """How a file in an attempt's folders is named in a message: ``logs/stdout.log``."""
    return f"{path.parent.name}/{path.name}" if path.parent.name else path.name


def describe(path: Path, mode: int) -> str:
    """What kind of file ``path`` is, from its ``lstat`` mode: ``a FIFO``, ``a symbolic
    link to '/etc/passwd'``."""
    if stat.S_ISREG(mode):
        return "a regular file"
    kind = next((name for test, name in _KINDS if test(mode)), "a special file")
    if stat.S_ISLNK(mode):
        try:
            return f"{kind} to {str(path.readlink())[:200]!r}"
        except OSError:
            pass
    return kind


def _check_kind(path: Path, mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise UntrustedFileError(_kind_message(path, describe(path, mode)))


def _kind_message(path: Path, kind: str) -> str:
    return f"{shown(path)} is {kind}, not a regular file (bugbout reads no other kind)"


def _read_at_most(fd: int, size: int) -> bytes:
    parts: list[bytes] = []
    left = size
    while left > 0:
        chunk = os.read(fd, min(_CHUNK, left))
        if not chunk:
            break
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _size(limit: int) -> str:
    if limit >= 1_000_000:
        return f"{limit / 1_000_000:g} MB"
    if limit >= 1000:
        return f"{limit / 1000:g} kB"
    return f"{limit} bytes"
