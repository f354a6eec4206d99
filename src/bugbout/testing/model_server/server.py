"""The HTTP side of the scripted model: routing by path, the request handler, the
:class:`ModelServer` that serves from a background thread, and the command line."""

from __future__ import annotations

import argparse
import gzip
import json
import re
import signal
import sys
import threading
import zlib
from collections.abc import Iterable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from bugbout.testing.model_server import anthropic, chat, gemini, responses
from bugbout.testing.model_server.replies import INPUT_TOKENS, Reply, json_reply, new_id
from bugbout.testing.model_server.script import RecordedRequest, Script, Step

_GEMINI_PATH = re.compile(r"/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")


def _route(script: Script, method: str, path: str, query: dict[str, list[str]], body: Any) -> Reply:
    """The reply to one request: by its path, the protocol that answers it."""
    if method in ("HEAD", "GET"):
        if path.rstrip("/") in ("", "/v1", "/v1beta"):
            return json_reply({"ok": True})
        if path.endswith("/models"):
            entry = {
                "id": "scripted",
                "object": "model",
                "owned_by": "bugbout",
                "name": "models/scripted",
            }
            return json_reply({"object": "list", "data": [entry], "models": [entry]})
        return json_reply({"error": {"message": f"no route for {method} {path}"}}, status=404)
    if method != "POST":
        return json_reply({"error": {"message": f"method {method} not allowed"}}, status=405)
    if not isinstance(body, Mapping):
        return json_reply(
            {"error": {"type": "invalid_request_error", "message": "expected a JSON object body"}},
            status=400,
        )
    if path.endswith("/messages/count_tokens"):
        return json_reply({"input_tokens": INPUT_TOKENS}, protocol="anthropic")
    if path.endswith("/messages"):
        return anthropic.reply(script, body)
    if path.endswith("/responses"):
        return responses.reply(script, body)
    if path.endswith("/chat/completions"):
        return chat.reply(script, body)
    match = _GEMINI_PATH.search(path)
    if match:
        return gemini.reply(script, body, match["model"], match["method"], query)
    return json_reply({"error": {"message": f"no route for POST {path}"}}, status=404)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            data = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                data += self.rfile.read(size)
                self.rfile.readline()
            raw = bytes(data)
        else:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        encoding = self.headers.get("Content-Encoding", "").lower()
        if encoding == "gzip":
            raw = gzip.decompress(raw)
        elif encoding == "deflate":
            raw = zlib.decompress(raw)
        return raw

    def _handle(self) -> None:
        split = urlsplit(self.path)
        query = parse_qs(split.query)
        body: Any = None
        reply: Reply | None = None
        try:
            raw = self._read_body() if self.command not in ("GET", "HEAD") else b""
            if raw:
                body = json.loads(raw)
        except (ValueError, OSError, zlib.error) as error:
            message = f"cannot read the request body: {error!r}"
            reply = json_reply(
                {"error": {"type": "invalid_request_error", "message": message}}, status=400
            )
        if reply is None:
            try:
                reply = _route(self.server.script, self.command, split.path, query, body)
            except Exception as error:  # a bug here must reach the test, not hang the agent
                reply = json_reply(
                    {"error": {"type": "api_error", "message": repr(error)}}, status=500
                )
        self.server.owner._record(
            RecordedRequest(
                method=self.command,
                path=split.path,
                body=body,
                query=query,
                headers={k.lower(): v for k, v in self.headers.items()},
                protocol=reply.protocol,
                step=reply.step,
                stream=reply.stream,
            )
        )
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        if reply.stream:
            self.send_header("Cache-Control", "no-cache")
        if reply.protocol == "anthropic":
            self.send_header("request-id", new_id("req_"))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(reply.body)
            self.wfile.flush()

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = _handle


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], owner: ModelServer) -> None:
        self.owner = owner
        super().__init__(address, _Handler)

    @property
    def script(self) -> Script:
        return self.owner.script


class ModelServer:
    """Serves a :class:`Script` on ``host:port`` (0: any free port) from a background thread.

    Use as a context manager, or call :meth:`start` and :meth:`stop`. ``url`` has no trailing
    slash; the OpenAI-style base URL is ``url + "/v1"``.
    """

    def __init__(
        self, script: Script | Iterable[Step], *, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.script = script if isinstance(script, Script) else Script(script)
        self.host = host
        self._port = port
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle -----------------------------------------------------------------------------

    def start(self) -> ModelServer:
        """Bind and serve in a daemon thread; returns self."""
        if self._httpd is not None:
            raise RuntimeError("the model server is already running")
        self._httpd = _HTTPServer((self.host, self._port), self)
        self._port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.1},
            name=f"model-server:{self._port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and free the port."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def wait(self) -> None:
        """Block until the server stops (or the caller is interrupted)."""
        while self._thread is not None and self._thread.is_alive():
            self._thread.join(timeout=0.5)

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    # addresses -----------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port (known once started)."""
        return self._port

    @property
    def url(self) -> str:
        """``http://host:port``, without a trailing slash."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self._port}"

    # recording -----------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """A copy of every request received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def scripted_requests(self) -> list[RecordedRequest]:
        """The requests that were answered from the script (side requests left out)."""
        return [r for r in self.requests if r.step is not None]

    def clear(self) -> None:
        """Forget the recorded requests."""
        with self._lock:
            self._requests.clear()

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)


# --------------------------------------------------------------------------------------------
# Command line


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bugbout.testing.model_server --script FILE.json [--host H] [--port N]``."""
    parser = argparse.ArgumentParser(
        prog="python -m bugbout.testing.model_server",
        description="Serve a scripted model over the Anthropic, OpenAI and Gemini HTTP APIs.",
    )
    parser.add_argument(
        "--script",
        required=True,
        type=Path,
        help='JSON list of steps: [{"shell": "cmd"}, {"say": "text"}]',
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    args = parser.parse_args(argv)
    try:
        script = Script.load(args.script)
    except (OSError, ValueError) as error:
        parser.error(f"cannot load {args.script}: {error}")
    server = ModelServer(script, host=args.host, port=args.port).start()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stop cleanly when killed
    print(server.url, flush=True)
    try:
        server.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0
