"""A python-build-standalone mirror on 127.0.0.1, for uv to download a Python from offline,
and a machine without some Pythons (:func:`hide`).

The one build it offers is made from a pyenv Python of this machine, in the
``install_only`` layout (``python/bin/python3.X``, ``python/lib/...``). pyenv builds are
linked with ``--enable-shared`` and an absolute ``RUNPATH`` to their own ``lib``: that
string is rewritten in place (same length, padded with NULs) to ``$ORIGIN/../lib``, so
the copy loads its own ``libpython`` wherever uv unpacks it. The test suite, the site
packages and bytecode are left out to keep the archive small.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import json
import os
import platform
import sys
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bugbout.core.plumbing.environments.interpreters import available_interpreters, pyenv_root

RUNNING = f"{sys.version_info[0]}.{sys.version_info[1]}"
_SKIPPED = ("test", "site-packages", "__pycache__", "idlelib", "tkinter", "turtledemo")


def pyenv_python(minor: str) -> Path | None:
    """The prefix of pyenv's newest Python ``minor`` (``"3.8"``), if pyenv has one."""
    root = pyenv_root()
    versions = root / "versions" if root else None
    if versions is None or not versions.is_dir():
        return None
    found = [
        entry
        for entry in versions.iterdir()
        if entry.name.startswith(f"{minor}.") and (entry / "bin" / f"python{minor}").is_file()
    ]
    return max(found, key=lambda p: tuple(int(n) for n in p.name.split(".")), default=None)


def relocatable_binary(prefix: Path, minor: str) -> bytes:
    """``prefix/bin/python3.X`` with its ``RUNPATH`` made relative to itself.

    Raises ``ValueError`` when the binary does not hold its ``lib`` path exactly once.
    """
    binary = (prefix / "bin" / f"python{minor}").read_bytes()
    absolute = f"{prefix / 'lib'}\0".encode()
    relative = b"$ORIGIN/../lib"
    if b"libpython" not in binary:  # a static build needs no rewrite
        return binary
    if binary.count(absolute) != 1 or len(relative) >= len(absolute):
        raise ValueError(f"{prefix}'s python{minor} does not name {prefix / 'lib'} once")
    return binary.replace(absolute, relative.ljust(len(absolute), b"\0"))


def install_only_archive(prefix: Path, minor: str, archive: Path) -> None:
    """Write ``archive`` (``.tar.gz``): ``prefix`` as python-build-standalone lays it out."""
    patched = archive.with_name(f"python{minor}")
    patched.write_bytes(relocatable_binary(prefix, minor))
    patched.chmod(0o755)

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        parts = Path(info.name).parts
        skipped = any(part in _SKIPPED for part in parts[3:]) or info.name.endswith(".a")
        return None if skipped else info

    with tarfile.open(archive, "w:gz", compresslevel=1) as tar:
        for part in ("bin", "lib", "include"):
            for entry in sorted((prefix / part).iterdir()):
                if entry.name == f"python{minor}" and part == "bin":
                    tar.add(patched, arcname=f"python/bin/python{minor}")
                else:
                    tar.add(entry, arcname=f"python/{part}/{entry.name}", filter=keep)
    patched.unlink()


def downloads_json(minor: str, patch: int, url: str, sha256: str) -> dict[str, object]:
    """uv's list of Python downloads, with one entry: CPython ``minor.patch`` at ``url``."""
    major, minor_number = (int(n) for n in minor.split("."))
    machine = platform.machine()
    libc = "gnu" if platform.libc_ver()[0] == "glibc" else "musl"
    key = f"cpython-{minor}.{patch}-linux-{machine}-{libc}"
    return {
        key: {
            "name": "cpython",
            "arch": {"family": machine, "variant": None},
            "os": "linux",
            "libc": libc,
            "major": major,
            "minor": minor_number,
            "patch": patch,
            "prerelease": "",
            "url": url,
            "sha256": sha256,
            "variant": None,
            "build": "bugbout-test",
        }
    }


@contextlib.contextmanager
def serving(directory: Path) -> Iterator[tuple[str, list[str]]]:
    """Serve ``directory`` on 127.0.0.1: its base URL, and the paths asked for so far."""
    requested: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(directory), **kwargs)  # type: ignore[arg-type]

        def do_GET(self) -> None:
            requested.append(self.path)
            super().do_GET()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requested
    finally:
        server.shutdown()
        server.server_close()


def mirror(directory: Path, base_url: str, prefix: Path, minor: str) -> Path:
    """Put in ``directory`` an archive of ``prefix`` and the downloads JSON naming it at
    ``base_url``; the JSON's path (for ``UV_PYTHON_DOWNLOADS_JSON_URL``)."""
    directory.mkdir(parents=True, exist_ok=True)
    archive = directory / f"cpython-{prefix.name}-install_only.tar.gz"
    if not archive.exists():
        install_only_archive(prefix, minor, archive)
    patch = int(prefix.name.split(".")[2])
    sha256 = hashlib.sha256(archive.read_bytes()).hexdigest()
    listing = downloads_json(minor, patch, f"{base_url}/{archive.name}", sha256)
    path = directory / "downloads.json"
    path.write_text(json.dumps(listing), encoding="utf-8")
    return path


def hide(monkeypatch: pytest.MonkeyPatch, root: Path, *minors: str) -> None:
    """Make the interpreter search find none of ``minors``: a pyenv root of links to the
    other versions, and ``PATH`` without the directories holding them."""
    assert RUNNING not in minors, "the running Python is always found"
    versions = root / "versions"
    versions.mkdir(parents=True)
    real = pyenv_root()
    for entry in sorted(real.joinpath("versions").iterdir()) if real else []:
        if ".".join(entry.name.split(".")[:2]) not in minors:
            (versions / entry.name).symlink_to(entry)
    monkeypatch.setenv("PYENV_ROOT", str(root))
    path = os.environ.get("PATH", "").split(os.pathsep)
    kept = [d for d in path if not any(Path(d, f"python{m}").exists() for m in minors)]
    monkeypatch.setenv("PATH", os.pathsep.join(kept))
    assert not set(minors) & set(available_interpreters())
