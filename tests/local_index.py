"""A package index on 127.0.0.1 for tests: wheels built here, served by PEP 691's JSON
simple API with PEP 700 upload times (what uv's ``--exclude-newer`` reads) and PEP 658
metadata, never the real index."""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import io
import json
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

JSON_API = "application/vnd.pypi.simple.v1+json"


@dataclass(frozen=True)
class Wheel:
    """A pure-Python wheel of ``name`` whose module holds ``VERSION``."""

    name: str
    version: str
    uploaded: str
    """Its upload time, ISO 8601 (e.g. ``2019-08-01T12:00:00Z``)."""
    requires: tuple[str, ...] = ()
    yanked: bool = False
    contents: tuple[tuple[str, bytes], ...] = ()
    """Its files, when it repackages an installed distribution (else a module is made)."""
    archive: str = ""
    """A source archive's suffix (``.tar.bz2``): served under that name instead of a
    wheel's (only its name is read)."""

    @classmethod
    def installed(cls, name: str, uploaded: str) -> Wheel:
        """The installed (pure-Python) distribution ``name`` as a wheel: the real code."""
        found = importlib.metadata.distribution(name)
        files = [
            (path.as_posix(), path.locate().read_bytes())
            for path in found.files or []
            if not path.as_posix().startswith("..")
            and "__pycache__" not in path.parts
            and path.name not in {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}
        ]
        return cls(name, found.version, uploaded, contents=tuple(files))

    @property
    def filename(self) -> str:
        if self.archive:
            return f"{self.name}-{self.version}{self.archive}"
        return f"{self.name.replace('-', '_')}-{self.version}-py3-none-any.whl"

    @property
    def info(self) -> str:
        """Its ``.dist-info`` folder."""
        for path, _ in self.contents:
            if path.endswith(".dist-info/METADATA"):
                return path.rsplit("/", 1)[0]
        return f"{self.name.replace('-', '_')}-{self.version}.dist-info"

    @property
    def metadata(self) -> bytes:
        if self.contents:
            return dict(self.contents)[f"{self.info}/METADATA"]
        lines = ["Metadata-Version: 2.1", f"Name: {self.name}", f"Version: {self.version}"]
        lines += [f"Requires-Dist: {requirement}" for requirement in self.requires]
        return ("\n".join(lines) + "\n").encode()

    def build(self) -> bytes:
        info = self.info
        files = dict(self.contents) or {
            f"{self.name}/__init__.py": f"VERSION = {self.version!r}\n".encode()
        }
        files[f"{info}/METADATA"] = self.metadata
        files[f"{info}/WHEEL"] = (
            b"Wheel-Version: 1.0\nGenerator: bugbout-tests\nRoot-Is-Purelib: true\n"
            b"Tag: py3-none-any\n"
        )
        record = "".join(
            f"{path},sha256={_digest(data)},{len(data)}\n" for path, data in files.items()
        )
        record += f"{info}/RECORD,,\n"
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            for path, data in files.items():
                archive.writestr(path, data)
            archive.writestr(f"{info}/RECORD", record)
        return buffer.getvalue()


@dataclass
class Index:
    """The served wheels, and the URL of their simple API."""

    url: str
    wheels: list[Wheel] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


@contextmanager
def serve(wheels: list[Wheel]) -> Iterator[Index]:
    """Serve ``wheels`` on 127.0.0.1 for the block: ``Index.url`` is its simple API."""
    built = {wheel.filename: wheel.build() for wheel in wheels}
    by_file = {wheel.filename: wheel for wheel in wheels}
    index = Index(url="", wheels=list(wheels))

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            index.requests.append(self.path)
            parts = [part for part in self.path.split("/") if part]
            if len(parts) == 2 and parts[0] == "simple":
                self._page(parts[1])
            elif len(parts) == 2 and parts[0] == "files":
                name = parts[1]
                if name.endswith(".metadata") and name.removesuffix(".metadata") in by_file:
                    self._send(by_file[name.removesuffix(".metadata")].metadata, "text/plain")
                elif name in built:
                    self._send(built[name], "application/octet-stream")
                else:
                    self.send_error(404)
            else:
                self.send_error(404)

        def _page(self, project: str) -> None:
            files = [w for w in wheels if w.name.lower().replace("_", "-") == project]
            if not files:
                self.send_error(404)
                return
            payload = {
                "meta": {"api-version": "1.1"},
                "name": project,
                "versions": sorted({w.version for w in files}),
                "files": [
                    {
                        "filename": w.filename,
                        "url": f"/files/{w.filename}",
                        "hashes": {"sha256": hashlib.sha256(built[w.filename]).hexdigest()},
                        "upload-time": w.uploaded,
                        "yanked": w.yanked,
                        "core-metadata": {"sha256": hashlib.sha256(w.metadata).hexdigest()},
                    }
                    for w in files
                ],
            }
            self._send(json.dumps(payload).encode(), JSON_API)

        def _send(self, body: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    index.url = f"http://127.0.0.1:{server.server_address[1]}/simple"
    try:
        yield index
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
