"""Run one command in a podman container that mirrors this machine, and remove the
container however the run ends: what the ``podman`` sandbox's wrapped command line starts.

The container's root is an empty skeleton of this machine's top-level entries, with
each entry bind-mounted read-only from the host, then the confinement's paths on top,
ancestors first: a masked directory becomes an empty read-only tmpfs, a masked file
``/dev/null``, a readable path a read-only bind, a writable one a read-write bind.
Host mounts that are writable and would show through a read-only entry are bound again
read-only (a read-only bind does not make its sub-mounts read-only). ``/tmp``,
``/var/tmp`` and ``/run`` are private tmpfs; the process has no capabilities, its own
pid, ipc and uts namespaces, and no network unless the spec keeps it (``--network
host``).

The variables of this process's environment are passed into the container by name,
its standard streams are the container's, and its open descriptors above 2 are passed
on at the same numbers (a test run's outcome descriptor).

Removal: ``podman run --rm`` removes the container when it ends. When this process is
killed instead (a timeout kills its process group), a watcher it forked into its own
session kills the podman client, removes the container by name, and only then closes
its copy of the caller's output streams, so that a caller reading them to the end
(``run_logged``) returns once the container is gone.

This module imports only the standard library: it starts with ``python -I`` for every
sandboxed run.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

LABEL = "io.bugbout"
"""The label bugbout puts on its containers (``bugbout.sandbox.podman.LABEL``)."""
ROLE = "sandbox"
NAME_PREFIX = "bugbout-sandbox-"
PRIVATE = ("/proc", "/sys", "/dev", "/tmp", "/var/tmp", "/run")
"""Places the container has its own of: host mounts there are never bound again."""
PODMAN_VARIABLES = (
    "CONTAINERS_CONF", "CONTAINERS_STORAGE_CONF", "CONTAINERS_REGISTRIES_CONF",
    "CONTAINER_HOST", "CONTAINER_CONNECTION", "CONTAINER_SSHKEY", "NOTIFY_SOCKET",
    "_CONTAINERS_USERNS_CONFIGURED", "_CONTAINERS_ROOTLESS_UID",
)  # fmt: skip
"""Variables that steer podman itself: never taken from, nor passed to, the confined
process."""
PRIVATE_TMPFS = ("/tmp", "/var/tmp", "/run")
"""Private, empty and writable in the container (nothing of the host's is copied in)."""
REMOVE_TIMEOUT = 60.0
CLIENT_GONE_TIMEOUT = 10.0

MASKED, READABLE, WRITABLE = "masked", "readable", "writable"


@dataclass(frozen=True)
class Spec:
    """What one sandboxed run needs; JSON on the runner's command line."""

    podman: str
    """The podman program (an absolute path)."""
    config: dict[str, str]
    """``CONTAINERS_CONF`` and ``CONTAINERS_STORAGE_CONF``: bugbout's podman configuration."""
    rootfs: str
    """The skeleton root: one empty directory, file or link per top-level host entry."""
    workdir: str
    layers: list[tuple[str, str]]
    """``(path, access)``, ancestors first: the host's top-level entries (readable unless
    the confinement says otherwise) and the confinement's paths."""
    argv: list[str]
    network: bool = False
    init: str | None = None
    """The init program (catatonit) to run as the container's pid 1, if there is one."""

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Spec:
        data = json.loads(text)
        data["layers"] = [(path, access) for path, access in data["layers"]]
        return cls(**data)


def runner_argv(spec: Spec) -> list[str]:
    """The command line that runs ``spec`` and exits with the command's exit status."""
    return [sys.executable, "-I", str(Path(__file__).resolve()), spec.to_json()]


def podman_argv(
    spec: Spec, name: str, variables: list[str], descriptors: int, mountinfo: str
) -> list[str]:
    """The ``podman run`` command line for ``spec``: the container named ``name`` gets the
    ``variables`` of the caller's environment and its descriptors 3 to 2+``descriptors``."""
    command = [spec.podman, "run", "--rm", "--name", name, "--interactive"]
    command += ["--label", f"{LABEL}={ROLE}"]
    command += ["--network", "host" if spec.network else "none"]
    command += ["--cap-drop", "all", "--security-opt", "no-new-privileges"]
    command += ["--read-only", "--read-only-tmpfs=false", "--log-driver", "none"]
    command += ["--hostname", "bugbout", "--workdir", spec.workdir]
    if spec.init:
        command += ["--init", "--init-path", spec.init]
    for mount in mounts(spec.layers, mountinfo):
        command += ["--mount", mount]
    for variable in variables:
        command += ["--env", variable]
    if descriptors:
        command += ["--preserve-fds", str(descriptors)]
    return [*command, "--rootfs", f"{spec.rootfs}:O", *spec.argv]


def mounts(layers: list[tuple[str, str]], mountinfo: str) -> list[str]:
    """``--mount`` values for the layers, then read-only binds of the writable host mounts
    that would otherwise show through a read-only layer."""
    found = [
        f"type=tmpfs,destination={place},notmpcopyup,tmpfs-mode=1777"
        for place in PRIVATE_TMPFS
        if Path(place).is_dir() and not any(path == place for path, _ in layers)
    ]
    for path, access in layers:
        if access == MASKED:
            if Path(path).is_dir():
                found.append(f"type=tmpfs,destination={path},ro=true,notmpcopyup,tmpfs-mode=0755")
            elif os.path.lexists(path):
                found.append(f"type=bind,source=/dev/null,destination={path},ro=true")
        elif Path(path).exists():
            found.append(f"type=bind,source={path},destination={path},ro={access != WRITABLE}")
    paths = {path for path, _ in layers}
    for point in writable_mounts(mountinfo):
        if point not in paths and _nearest(point, layers) == READABLE:
            found.append(f"type=bind,source={point},destination={point},ro=true")
    return found


def writable_mounts(mountinfo: str) -> list[str]:
    """The host's read-write mount points outside the container's private places."""
    points = []
    for line in mountinfo.splitlines():
        fields = line.split()
        if len(fields) < 6:
            continue
        point = _unescape(fields[4])
        if point == "/" or "rw" not in fields[5].split(","):
            continue
        if any(point == place or point.startswith(place + "/") for place in PRIVATE):
            continue
        points.append(point)
    return points


def _nearest(point: str, layers: list[tuple[str, str]]) -> str | None:
    """The access of the most specific layer at or above ``point`` (``None``: none is)."""
    access = None
    for path, kind in layers:
        if point == path or point.startswith(path.rstrip("/") + "/"):
            access = kind  # ancestors come first: the last match is the nearest
    return access if Path(point).exists() else None


def _unescape(text: str) -> str:
    """A mountinfo path: spaces, tabs, newlines and backslashes are octal escapes."""
    for escape, character in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        text = text.replace(escape, character)
    return text


# -- running -------------------------------------------------------------------------------


def run(spec: Spec) -> int:
    """Run ``spec``; the command's exit status (125: podman could not run it)."""
    descriptors = _pass_descriptors()
    caller = dict(os.environ)
    variables = [name for name in caller if name not in PODMAN_VARIABLES and _valid(name)]
    environ = {k: v for k, v in caller.items() if k not in PODMAN_VARIABLES} | spec.config
    try:
        mountinfo = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        mountinfo = ""
    name = f"{NAME_PREFIX}{uuid.uuid4().hex[:16]}"
    argv = podman_argv(spec, name, variables, descriptors, mountinfo)
    watcher = _watch(spec, name, environ)
    try:
        client = subprocess.Popen(argv, env=environ, pass_fds=range(3, 3 + descriptors))
    except OSError as exc:
        watcher.done()
        sys.stderr.write(
            f"bugbout: cannot start podman ({exc}); install it or fix sandbox.executable\n"
        )
        return 125
    watcher.guard(client.pid)
    code = client.wait()
    watcher.done()
    return code if code >= 0 else 128 - code


def _pass_descriptors() -> int:
    """How many descriptors above 2 to pass on: up to the highest open one, the gaps
    filled with ``/dev/null`` (podman passes a contiguous range)."""
    listed = [int(entry.name) for entry in Path("/proc/self/fd").iterdir()]
    open_fds = []
    for fd in listed:
        if fd > 2:
            with contextlib.suppress(OSError):
                os.fstat(fd)  # the listing's own descriptor is closed by now
                open_fds.append(fd)
    if not open_fds:
        return 0
    highest = max(open_fds)
    while (fd := os.open(os.devnull, os.O_RDWR)) < highest:
        pass  # open() takes the lowest free number: each call fills the lowest gap
    os.close(fd)
    return highest - 2


def _valid(name: str) -> bool:
    return bool(name) and "=" not in name and not name.startswith("-")


class _Watcher:
    """A process in its own session that removes the container if the runner dies."""

    def __init__(self, pid: int, pipe: int) -> None:
        self.pid, self.pipe = pid, pipe

    def guard(self, client: int) -> None:
        with contextlib.suppress(OSError):
            os.write(self.pipe, f"{client}\n".encode())

    def done(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self.pipe, b"done\n")
        with contextlib.suppress(OSError):
            os.close(self.pipe)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


def _watch(spec: Spec, name: str, environ: dict[str, str]) -> _Watcher:
    """Fork the watcher. It reads the podman client's pid, then ``done``; end of file
    before ``done`` means the runner was killed: it kills the client and removes the
    container, holding the caller's stdout and stderr until then."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid:
        os.close(read_end)
        return _Watcher(pid, write_end)
    try:  # the watcher
        os.setsid()  # out of the runner's process group: killing the group spares it
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
            signal.signal(number, signal.SIG_IGN)
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        keep = {0, 1, 2, read_end, null}
        for fd in range(3, _highest_fd() + 1):  # never hold the descriptors passed on
            if fd not in keep:
                with contextlib.suppress(OSError):
                    os.close(fd)
        with open(read_end, "rb") as lines:  # noqa: PTH123
            received = lines.read().decode().split()
        if not received or received[-1] != "done":
            client = int(received[-1]) if received and received[-1].isdigit() else None
            _remove(spec, name, environ, client, null)
    finally:
        os._exit(0)


def _highest_fd() -> int:
    try:
        return max(int(entry.name) for entry in Path("/proc/self/fd").iterdir())
    except (OSError, ValueError):
        return 255


def _remove(spec: Spec, name: str, environ: dict[str, str], client: int | None, null: int) -> None:
    """Kill the podman client (so that it creates nothing more), then remove the container."""
    if client is not None and name.encode() in _cmdline(client):
        with contextlib.suppress(OSError):
            os.kill(client, signal.SIGKILL)
        deadline = time.monotonic() + CLIENT_GONE_TIMEOUT
        while name.encode() in _cmdline(client) and time.monotonic() < deadline:
            time.sleep(0.02)
    deadline = time.monotonic() + REMOVE_TIMEOUT
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(
                [spec.podman, "rm", "--force", "--ignore", "--time", "0", name],
                env=environ, stdin=null, stdout=null, stderr=null,
                timeout=REMOVE_TIMEOUT, check=False,
            )  # fmt: skip
            exists = subprocess.run(
                [spec.podman, "container", "exists", name],
                env=environ, stdin=null, stdout=null, stderr=null,
                timeout=REMOVE_TIMEOUT, check=False,
            )  # fmt: skip
            if exists.returncode == 1:
                return
        time.sleep(0.2)


def _cmdline(pid: int) -> bytes:
    """A live process's command line (empty once it is gone or a zombie)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: podman_run.py SPEC-JSON\n")
        return 2
    return run(Spec.from_json(argv[0]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
