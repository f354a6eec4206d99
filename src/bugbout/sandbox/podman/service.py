"""bugbout's podman service: ``podman system service`` on a private socket, and a
podman-py client of it.

:meth:`PodmanService.client` starts ``podman system service --time=0`` with bugbout's
configuration (or uses the socket the user names) and returns a podman-py client. The
service it starts stops when :meth:`PodmanService.close` is called or this process ends,
however it ends. podman-py is imported only when a client is made.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from bugbout.sandbox.podman.config import INSTALL, PodmanConfig, PodmanError, last_line

if TYPE_CHECKING:
    from podman import PodmanClient

SERVICE_TIMEOUT = 30.0
REQUEST_TIMEOUT = 600.0


@dataclass
class PodmanService(PodmanConfig):
    """bugbout's podman configuration and its service. ``socket``: an existing podman
    service's socket (a path or ``unix://`` URL) to use instead of starting one."""

    socket: str | None = None
    _service: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)
    _socket_dir: Path | None = field(default=None, init=False, repr=False)
    _client: Any = field(default=None, init=False, repr=False)

    @property
    def socket_path(self) -> Path:
        """The service's socket (starting the service if bugbout runs it)."""
        if self.socket:
            return Path(self.socket.removeprefix("unix://"))
        self._start_service()
        assert self._socket_dir is not None
        return self._socket_dir / "podman.sock"

    def client(self) -> PodmanClient:
        """A podman-py client of bugbout's podman service (started on first use)."""
        if self._client is None:
            from podman import PodmanClient

            path = self.socket_path
            if not answers(path):
                raise PodmanError(
                    f"no podman service answers on {path}; start one with `podman system "
                    f"service --time=0 unix://{path}` or leave environment.socket unset"
                )
            self._client = PodmanClient(base_url=f"unix://{path}", timeout=REQUEST_TIMEOUT)
        client: PodmanClient = self._client
        return client

    def _start_service(self) -> None:
        if self._service is not None and self._service.poll() is None:
            return
        if shutil.which(self.executable) is None:
            raise PodmanError(f"podman is not installed: {INSTALL}")
        # A short path (unix sockets allow about 107 bytes) on the runtime folder, not in
        # TMPDIR: a sandbox hides /run and /tmp, but a TMPDIR elsewhere may stay readable,
        # and reading a socket's folder is enough to connect to it.
        runtime = self.runtime_dir
        runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
        if runtime.stat().st_uid != os.geteuid():
            raise PodmanError(
                f"{runtime} belongs to another user: remove it, or set XDG_RUNTIME_DIR to "
                "a folder of your own"
            )
        self._socket_dir = Path(tempfile.mkdtemp(prefix="service-", dir=runtime))
        weakref.finalize(self, shutil.rmtree, self._socket_dir, True)
        path = self._socket_dir / "podman.sock"
        log = self.config_dir / "service.log"
        env = {**os.environ, **self.environ()}
        # The shell stops the service when this process ends, however it ends: its stdin
        # is a pipe only this process holds, and reading it returns at end of file.
        keeper = 'podman=$1; shift; "$podman" "$@" & pid=$!; read -r _; kill "$pid"; wait "$pid"'
        with log.open("ab") as output:
            self._service = subprocess.Popen(
                ["/bin/sh", "-c", keeper, "sh", self.executable, "system", "service",
                 "--time=0", f"unix://{path}"],
                stdin=subprocess.PIPE, stdout=output, stderr=output, env=env,
                start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + SERVICE_TIMEOUT
        while not answers(path):
            if self._service.poll() is not None or time.monotonic() > deadline:
                tail = _tail(log)
                self.close()
                raise PodmanError(f"podman system service did not start: {tail} (log: {log})")
            time.sleep(0.05)

    def close(self) -> None:
        """Stop the service this object started (a named socket's service keeps running)."""
        self._client = None
        service, self._service = self._service, None
        if service is not None:
            if service.stdin is not None:
                with contextlib.suppress(OSError):
                    service.stdin.close()
            try:
                service.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(service.pid, signal.SIGKILL)
                service.wait()
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = None
            self.release_storage()

    def release_storage(self) -> None:
        """Undo the mount podman's overlay driver leaves on its own folder, so that the
        storage can be deleted like any folder; it stays while anything uses it."""
        home = self.storage_dir / "storage" / "overlay"
        if os.geteuid() == 0 and os.path.ismount(home) and shutil.which("umount"):
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                subprocess.run(["umount", str(home)], capture_output=True, timeout=30, check=False)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def answers(path: Path) -> bool:
    """Whether a podman service answers ``_ping`` on ``path``."""
    from podman import PodmanClient

    try:
        with PodmanClient(base_url=f"unix://{path}", timeout=5) as client:
            return bool(client.ping())
    except OSError:  # nothing there, or not a podman service (podman-py's errors included)
        return False


def _tail(path: Path) -> str:
    try:
        return last_line(path.read_text(encoding="utf-8", errors="replace")[-4000:])
    except OSError:
        return "no log"
