"""The outcome plugin's modules compiled once for an environment's interpreter, kept in
``BUGBOUT_HOME`` and handed to every sandboxed test run read-only.

Test runs set ``PYTHONDONTWRITEBYTECODE`` and bugbout's package holds no bytecode for the
environment's Python, so each run would compile the plugin's modules from source again
(about 6 ms of CPU a run on Python 3.13). Instead bugbout has the environment's
interpreter compile them once (``python -I -S``: the standard library alone, no site
and no code of the project), in the runs' sandbox (it writes only a scratch folder; the
code comes back on its output), and keeps what it wrote in ``BUGBOUT_HOME/plugin-code``,
under a name made of the sources' hash and the interpreter's file, followed by the
SHA-256 of what it holds (written whole: synced, then renamed). Each run gets a copy in
a sealed memory file (nothing can write it) open as ``BUGBOUT_CODE_FD``; the plugin reads
and closes it before any conftest runs, and uses it only when it was compiled by its own
kind of interpreter (the same magic number) and unmarshals whole, else compiles from
source as before.

Code under test never writes or chooses the kept code: it is made before the run by
bugbout, in a folder the sandbox hides, and a kept file that is not bugbout's (another
owner, writable by others, not a regular file, another hash in its first line, a digest
that does not match: cut short) is made again, never used. Runs that are not sandboxed
(``sandbox=none``) could write that folder, so theirs neither keep nor read it. A command
that confines itself (the podman environment's container) and an interpreter that
cannot compile it (Python 2) get none: their runs compile the plugin as before.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import secrets
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from bugbout.core.plumbing.confinement.confine import Confine
from bugbout.core.plumbing.environments.environment import Command

FOLDER = "plugin-code"
"""The folder of ``BUGBOUT_HOME`` that keeps the compiled plugin."""
FORMAT = b"bugbout-plugin-code 1"
"""The first line's start: the layout's version (the sources' hash follows)."""
LOADED_BY_PYTEST = ("bugbout_outcomes.py", "bugbout_coverage.py")
"""The modules pytest loads with ``-p`` itself (it rewrites their assertions): not kept."""
VARIABLE = "BUGBOUT_CODE_FD"
COMPILE_TIMEOUT = 60.0
"""Seconds the interpreter may take to compile the plugin (it takes a tenth of one)."""
LIMIT = 16_000_000
"""The most bytes of compiled plugin read (it is about 100 kB)."""
_COMPILE = (
    "import marshal, os, sys\n"
    "from importlib.util import MAGIC_NUMBER\n"
    "codes = {}\n"
    "for path in sys.argv[2:]:\n"
    "    with open(path, 'rb') as source:\n"
    "        name = os.path.basename(path)[:-3]\n"
    "        codes[name] = compile(source.read(), path, 'exec', dont_inherit=True)\n"
    "out = getattr(sys.stdout, 'buffer', sys.stdout)\n"
    "out.write(sys.argv[1].encode() + b'\\n' + MAGIC_NUMBER.hex().encode() + b'\\n')\n"
    "out.write(marshal.dumps(codes))\n"
)
"""What the environment's interpreter runs: the first line it is given, its magic
number in hex, then its code of each module by name, marshalled."""
DIGEST = hashlib.sha256().digest_size
"""The bytes of the SHA-256 that ends a kept file."""


@dataclass(frozen=True)
class _Sandbox:
    """The sandbox the compile runs in: what it makes does not depend on which."""

    confine: Confine = field(compare=False)


def plugin_code(
    command: Command, plugin: Path, home: Path, confine: Confine | None
) -> bytes | None:
    """The compiled modules of the plugin in folder ``plugin`` for the interpreter that
    runs ``command`` (``<python> -m pytest ...``), kept in ``home`` and compiled in
    ``confine``'s sandbox; ``None`` when runs are not sandboxed (``confine`` is ``None``),
    the command runs no interpreter bugbout can call (one that confines itself, a
    wrapper) or the interpreter cannot compile them."""
    if confine is None or command.contained or command.argv[1:3] != ["-m", "pytest"]:
        return None
    python = Path(command.argv[0])
    if not python.is_absolute():
        return None
    try:
        interpreter = python.stat()
    except OSError:
        return None
    sources = tuple(
        (path, entry.st_mtime_ns, entry.st_size)
        for path in sorted(plugin.glob("bugbout_*.py"))
        if path.name not in LOADED_BY_PYTEST
        for entry in [path.stat()]
    )
    identity = (
        str(python.resolve()),
        interpreter.st_ino,
        interpreter.st_size,
        interpreter.st_mtime_ns,
    )
    return _kept(sources, identity, home, _Sandbox(confine))


@functools.lru_cache(maxsize=32)
def _kept(
    sources: tuple[tuple[Path, int, int], ...],
    interpreter: tuple[object, ...],
    home: Path,
    sandbox: _Sandbox,
) -> bytes | None:
    """The compiled plugin for these sources (path, mtime, size) and this interpreter
    (its resolved path and file's identity), read from ``home`` or made there in
    ``sandbox``: once a process."""
    digest = hashlib.sha256()
    for path, _, _ in sources:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    first = FORMAT + b" " + digest.hexdigest().encode()
    key = hashlib.sha256(repr(interpreter).encode()).hexdigest()[:16]
    kept = home / FOLDER / f"{digest.hexdigest()[:16]}-{key}"
    found = _read(kept)
    if found is not None:
        payload, check = found[:-DIGEST], found[-DIGEST:]
        if payload.split(b"\n", 1)[0] == first and hashlib.sha256(payload).digest() == check:
            return payload
    made = _compile(str(interpreter[0]), first, [path for path, _, _ in sources], sandbox)
    if made is not None:
        _keep(kept, made + hashlib.sha256(made).digest())
    return made


def _read(kept: Path) -> bytes | None:
    """The kept file's bytes when it is bugbout's: a regular file of this user that no
    one else may write; else ``None``."""
    try:
        descriptor = os.open(kept, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(descriptor)
        mine = stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid()
        if not mine or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return None
        return handle.read(LIMIT)


def _compile(python: str, first: bytes, sources: list[Path], sandbox: _Sandbox) -> bytes | None:
    """The plugin compiled by ``python`` in ``sandbox`` (writing only a scratch folder),
    isolated from its site and environment; ``None`` when it cannot (Python 2, no ``-I``,
    a crash, a timeout)."""
    try:
        with tempfile.TemporaryDirectory(prefix="bugbout-compile-") as scratch:
            argv = [python, "-I", "-S", "-c", _COMPILE, first.decode(), *map(str, sources)]
            done = subprocess.run(
                sandbox.confine(argv, Path(scratch), ()),
                cwd=scratch,
                env={"PATH": os.defpath, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HOME": scratch},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=COMPILE_TIMEOUT,
                check=False,
            )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0 or not done.stdout.startswith(first + b"\n"):
        return None
    return done.stdout


def _keep(kept: Path, made: bytes) -> None:
    """Write ``made`` to ``kept`` whole (a temporary name, synced to disk, renamed),
    readable by all and writable by this user alone; where ``home`` cannot be written it
    is not kept."""
    temporary = kept.with_name(f".{kept.name}.{os.getpid()}.{secrets.token_hex(4)}")
    with contextlib.suppress(OSError):
        kept.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        try:
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(made)
                handle.flush()
                os.fsync(handle.fileno())
            temporary.replace(kept)
        finally:
            temporary.unlink(missing_ok=True)


@contextlib.contextmanager
def sealed(code: bytes | None) -> Iterator[int | None]:
    """A memory file holding ``code`` that no one can change (sealed), open for the
    run to inherit; ``None`` without code or where memory files cannot be sealed."""
    if code is None:
        yield None
        return
    try:
        descriptor = os.memfd_create("bugbout-plugin-code", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    except (AttributeError, OSError):
        yield None
        return
    try:
        view = memoryview(code)
        while view:
            view = view[os.write(descriptor, view) :]
        seals = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE
        fcntl.fcntl(descriptor, fcntl.F_ADD_SEALS, seals)
    except OSError:
        os.close(descriptor)
        yield None
        return
    try:
        yield descriptor
    finally:
        os.close(descriptor)
